# libspgemm: build, demo, tests, install.
#   make demo     build the library and run the demo (7-point 3D Laplacian, C = A*A + reuse)
#   make check    every test: formatting, lints, Rust tests, C/C++ ABI tests under sanitizers,
#                 the MKL layer against MKL's outputs (mkl-check), Fortran module up to date,
#                 examples built from an installed copy
#   make install PREFIX=DIR [DESTDIR=STAGE]   library, headers, Fortran module source,
#                 pkg-config file and CMake package under DIR; the MKL compatibility layer
#                 libspgemm_mkl with its headers in include/spgemm-mkl and spgemm-mkl.pc
#   make install MPI=1 ...   the same with the library built with the `mpi` feature
#                 (target/mpi); spgemm.pc then requires the system MPI's pkg-config module
#   make petsc-driver   build/petsc_dist, the PETSc peer of the distributed benchmarks
#                 (scripts/bench_dist_petsc.sh; not part of make check)

CARGO   ?= cargo
CC      ?= cc
CXX     ?= c++
PROFILE := release
LIBDIR  := target/$(PROFILE)
# MPI=1: lib, mkl-lib and install use the library built with the `mpi` feature, in its own
# target directory (as dist-check builds it), so neither build overwrites the other.
MPI     ?= 0
ifeq ($(MPI),1)
LIBDIR  := target/mpi/$(PROFILE)
LIB_CARGO := CARGO_TARGET_DIR=target/mpi
LIB_FEATURES := --features mpi
endif
BUILD   := build
CFLAGS_STRICT := -std=c99 -Wall -Wextra -pedantic -Werror
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LINK_SO := -L$(LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(LIBDIR))

# dist-check-run: see dist-check
.PHONY: dist-check-run petsc-driver
.PHONY: all lib demo check lint layers rust-test cuda-check c-test abi-coverage header-check symbols \
        fma-calls clean install fortran-module fortran-check examples-check deps-demo deps-check dist-check \
        mkl-lib mkl-check

all: lib mkl-lib

# The shared library carries the soname libspgemm.so.0; the symlink lets the loader find it.
lib:
	$(LIB_CARGO) $(CARGO) build --release --lib $(LIB_FEATURES)
	ln -sf libspgemm.so $(LIBDIR)/libspgemm.so.0

$(BUILD):
	mkdir -p $(BUILD)

# System packages the targets need: installed when missing (as root on Debian), else one line
# says what to install. DEPS=0 skips the check.
DEPS ?= 1
deps-demo:
ifneq ($(DEPS),0)
	@scripts/install_deps.sh demo
endif
deps-check:
ifneq ($(DEPS),0)
	@scripts/install_deps.sh check
endif

demo: deps-demo
	@$(MAKE) --no-print-directory lib
	@mkdir -p $(BUILD)
	$(CC) -O2 $(CFLAGS_STRICT) -Iinclude examples-c/laplace_demo.c -o $(BUILD)/laplace_demo $(LINK_SO) -lm
	$(BUILD)/laplace_demo

check: deps-check
	@$(MAKE) --no-print-directory lint layers rust-test cuda-check c-test mkl-check fuzz-check fortran-check \
	  examples-check dist-check

# Clippy in the release profile: its check artifacts sit beside the build's and are reused.
lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings

# No import cycle between files of src/ and no import against the layer order of
# docs/ARCHITECTURE.md; the checker's own test plants violations and must see them.
layers:
	$(PY) scripts/check_layers.py
	$(PY) scripts/check_layers.py --self-test

# One build of the library serves `make lib`, these tests and the C tests (the feature set
# of `cargo build --lib` and `cargo test` is the same; see Cargo.toml).
# The CPU kernels again on the base ISA (no AVX-512 rank sort, short-row maps or vector
# expansion: the paths of other machines).
# The SpMV kernels again with each summation order forced (`fast_gather`: the machine picks
# one; the tests compare the kernels of the other only when it is forced).
rust-test:
	$(CARGO) test --release
	SPGEMM_SPMM_ISA=base $(CARGO) test --release cpu::
	SPGEMM_SPMV_GATHER=0 $(CARGO) test --release spmv
	SPGEMM_SPMV_GATHER=1 $(CARGO) test --release spmv

# CUDA kernels, no GPU needed: NVRTC (PyPI wheel in .venv-cuda, ~340 MB on the first run;
# CUDA_CHECK=0 skips this target) compiles every kernel for sm_80 and sm_90 as the library
# does at run time, ptxas assembles them; registers, shared memory and spills per kernel go
# to target/cuda-kernels.txt; a spill in a hash kernel fails. Then the GPU test suite,
# from the binaries `rust-test` built (the same `cargo test --release` units: `--lib` would
# select a second fingerprint and rebuild the crate); each test prints SKIPPED without a GPU.
CUDA_CHECK ?= 1
cuda-check:
ifeq ($(CUDA_CHECK),0)
	@echo "cuda-check skipped (CUDA_CHECK=0)"
else
	@echo "== CUDA kernel compile check (NVRTC and ptxas from PyPI into .venv-cuda)"
	@eval "$$(scripts/cuda_tools.sh)" && SPGEMM_REQUIRE_NVRTC=1 $(CARGO) test --release unit_tests::cuda_compile -- --nocapture
	@cat target/cuda-kernels.txt
	@echo "== GPU test suite (each test prints SKIPPED <name>: <reason> without a usable GPU)"
	@mkdir -p $(BUILD); rc=0; $(CARGO) test --release unit_tests::cuda_gpu -- --nocapture --test-threads=1 \
	  > $(BUILD)/cuda_gpu.log 2>&1 || rc=$$?; \
	  grep -E 'SKIPPED|test result|on NVIDIA|panicked|FAILED' $(BUILD)/cuda_gpu.log; exit $$rc
endif

# C and C++ programs in ffi-tests/ use the ABI exactly as callers do (see ffi-tests/README.md).
# Each prints "N passed, M failed" and exits non-zero on failure; leak checking stays on.
# Each program is rebuilt only when its source, the header or the library changed.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	RUST_BACKTRACE=0
FFI_C   := $(patsubst ffi-tests/%.c,$(BUILD)/ffi/%,$(wildcard ffi-tests/*.c))
FFI_CXX := $(patsubst ffi-tests/%.cpp,$(BUILD)/ffi/%,$(wildcard ffi-tests/*.cpp))
FFI_F90 := $(patsubst ffi-tests/%.f90,$(BUILD)/ffi/%_f90,$(wildcard ffi-tests/*.f90))
FFI_DEPS := include/spgemm.h $(wildcard ffi-tests/*.h) $(LIBDIR)/libspgemm.so

$(BUILD)/ffi/%: ffi-tests/%.c $(FFI_DEPS)
	@mkdir -p $(@D)
	$(CC) -g $(CFLAGS_STRICT) $(SAN) -pthread -Iinclude $< -o $@ $(LINK_SO) -lm

$(BUILD)/ffi/%: ffi-tests/%.cpp $(FFI_DEPS)
	@mkdir -p $(@D)
	$(CXX) -g -std=c++17 -Wall -Wextra -Werror $(SAN) -pthread -Iinclude $< -o $@ $(LINK_SO)

# Fortran programs use the generated module (include/spgemm.f90) as Fortran callers do;
# built without sanitizers (gfortran's runtime is not instrumented).
$(BUILD)/ffi/%_f90: ffi-tests/%.f90 include/spgemm.f90 $(LIBDIR)/libspgemm.so
	@mkdir -p $(@D)/mod-$*
	$(FC) -g -std=f2008 -Wall -Wextra -Werror -J$(@D)/mod-$* include/spgemm.f90 $< -o $@ $(LINK_SO)

c-test: lib header-check symbols abi-coverage fma-calls
	@$(MAKE) --no-print-directory $(FFI_C) $(FFI_CXX) $(FFI_F90)
	@set -e; for t in $(FFI_C) $(FFI_CXX); do echo "== $$t (ASan+UBSan)"; $(SAN_ENV) $$t; done
	@set -e; for t in $(FFI_F90); do echo "== $$t"; $$t; done

# Every function the header declares is called by some program in ffi-tests/.
abi-coverage:
	@missing=$$(for f in $$(grep -oE '\b(spgemm|spmm)[a-z0-9_]*\(' include/spgemm.h | tr -d '(' | sort -u); do \
	  grep -qE "\b$$f\(" ffi-tests/*.c ffi-tests/*.cpp || echo "$$f"; done); \
	if [ -n "$$missing" ]; then echo "functions of include/spgemm.h not called in ffi-tests/:"; \
	  echo "$$missing"; exit 1; fi; \
	echo "ffi-tests call all $$(grep -oE '\b(spgemm|spmm)[a-z0-9_]*\(' include/spgemm.h | sort -u | wc -l) functions of include/spgemm.h"

# The header compiles as strict C99 and C++17.
header-check: | $(BUILD)
	$(CC) $(CFLAGS_STRICT) -fsyntax-only -x c include/spgemm.h
	$(CXX) -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ include/spgemm.h

# Only spgemm_* / spmm* symbols are exported from the shared library.
symbols: lib
	@bad=$$(nm -D --defined-only $(LIBDIR)/libspgemm.so | awk '{print $$3}' | grep -v -E '^(spgemm_|spmm)' || true); \
	if [ -n "$$bad" ]; then echo "unexpected exported symbols:"; echo "$$bad"; exit 1; fi; \
	echo "exported: $$(nm -D --defined-only $(LIBDIR)/libspgemm.so | wc -l) symbols, all spgemm_*/spmm*"
	@readelf -d $(LIBDIR)/libspgemm.so | grep -q 'SONAME.*libspgemm.so.0' && echo "soname: libspgemm.so.0"

# Every fused multiply-add of the built library is an instruction: no function calls libm's
# fma/fmaf (code compiled without the FMA feature does, once per entry; scripts/check_fma_calls.py).
fma-calls: lib
	$(PY) scripts/check_fma_calls.py $(LIBDIR)/libspgemm.so

clean:
	$(CARGO) clean
	rm -rf $(BUILD)

# ---- MKL compatibility layer (mkl/; contract: mkl/tests/README.md; docs/MKL.md) ----
# libspgemm_mkl is C over the public ABI (mkl/src): MKL's inspector-executor names on top of
# libspgemm. The shared library sits beside libspgemm.so with RUNPATH $ORIGIN, so the same
# file works in target/release and once installed; the archive needs libspgemm.a after it.
MKL_SRC    := $(wildcard mkl/src/*.c)
MKL_OBJ    := $(patsubst mkl/src/%.c,$(BUILD)/mkl/%.o,$(MKL_SRC))
MKL_DEPS   := $(wildcard mkl/include/*.h) mkl/src/layer.h include/spgemm.h
MKL_CFLAGS := -std=c11 -Wall -Wextra -pedantic -Werror -Imkl/include -Iinclude
MKL_TEST   := mkl/tests/mkl_api_test.c
MKL_OUT    := $(BUILD)/mkl
ANCHORS    ?= ../shared/anchors

mkl-lib: lib
	@$(MAKE) --no-print-directory $(LIBDIR)/libspgemm_mkl.so $(LIBDIR)/libspgemm_mkl.a

$(MKL_OUT)/%.o: mkl/src/%.c $(MKL_DEPS)
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIC $(MKL_CFLAGS) -c $< -o $@

$(LIBDIR)/libspgemm_mkl.so: $(MKL_OBJ) mkl/src/libspgemm_mkl.map $(LIBDIR)/libspgemm.so
	$(CC) -shared -o $@ -Wl,-soname,libspgemm_mkl.so.$(SOVERSION) -Wl,--version-script=mkl/src/libspgemm_mkl.map \
	  -Wl,--no-undefined $(MKL_OBJ) -L$(LIBDIR) -lspgemm -pthread '-Wl,-rpath,$$ORIGIN'
	ln -sf libspgemm_mkl.so $(LIBDIR)/libspgemm_mkl.so.$(SOVERSION)

$(LIBDIR)/libspgemm_mkl.a: $(MKL_OBJ)
	rm -f $@
	ar rcs $@ $(MKL_OBJ)

# mkl_api_test.c (written only against MKL's API) built LP64 and ILP64 against the shared
# layer, and again with the layer's sources compiled in under ASan+UBSan; every output must
# match the golden files real MKL wrote (compare.py: structure exact, values 1e-12);
# layer_test.c (the layer's own promises beyond MKL's, e.g. hints building analyses) under
# ASan+UBSan, LP64 and ILP64. Then the
# headers as strict C99/C++17, the exported symbols, and the peer drivers of $(ANCHORS)
# (skipped where that folder is absent, as in a clean clone) built unchanged against the layer
# and run on a small input: nnzC and checksums must equal real MKL's (mkl/tests/expected/anchors.txt).
mkl-check: mkl-lib
	@mkdir -p $(MKL_OUT)/san
	@set -e; for s in $(MKL_SRC); do \
	  $(CC) -g -O1 $(SAN) $(MKL_CFLAGS) -c $$s -o $(MKL_OUT)/san/$$(basename $$s .c).o; done
	@set -e; for m in lp64 ilp64; do f=; [ $$m = ilp64 ] && f=-DMKL_ILP64; \
	  $(CC) -O1 -std=c99 -Wall -Wextra -pedantic -Werror $$f -Imkl/include $(MKL_TEST) -o $(MKL_OUT)/t_$$m \
	    -L$(LIBDIR) -lspgemm_mkl -Wl,-rpath,$(abspath $(LIBDIR)) -lm; \
	  $(CC) -g -O1 $(SAN) -std=c99 -Wall -Wextra -pedantic -Werror $$f -Imkl/include -pthread \
	    $(MKL_TEST) $(MKL_OUT)/san/*.o -o $(MKL_OUT)/t_$${m}_san $(LINK_SO) -lm; \
	  echo "== $(MKL_OUT)/t_$$m"; $(MKL_OUT)/t_$$m > $(MKL_OUT)/$$m.txt; \
	  $(PY) mkl/tests/compare.py mkl/tests/expected/$$m.txt $(MKL_OUT)/$$m.txt; \
	  echo "== $(MKL_OUT)/t_$${m}_san (ASan+UBSan, layer compiled in)"; \
	  $(SAN_ENV) $(MKL_OUT)/t_$${m}_san > $(MKL_OUT)/$${m}_san.txt; \
	  $(PY) mkl/tests/compare.py mkl/tests/expected/$$m.txt $(MKL_OUT)/$${m}_san.txt; \
	  $(CC) -g -O1 $(SAN) -std=c99 -Wall -Wextra -pedantic -Werror $$f -Imkl/include -pthread \
	    mkl/tests/layer_test.c $(MKL_OUT)/san/*.o -o $(MKL_OUT)/layer_test_$$m $(LINK_SO) -lm; \
	  echo "== $(MKL_OUT)/layer_test_$$m (ASan+UBSan, layer compiled in)"; $(SAN_ENV) $(MKL_OUT)/layer_test_$$m; done
	@set -e; for f in "" -DMKL_ILP64; do for h in mkl_types.h mkl_spblas.h mkl_service.h mkl.h; do \
	  printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' $$h $$h > $(MKL_OUT)/inc.c; \
	  $(CC) $(CFLAGS_STRICT) $$f -Imkl/include -fsyntax-only $(MKL_OUT)/inc.c; \
	  $(CXX) -std=c++17 -Wall -Wextra -pedantic -Werror $$f -Imkl/include -fsyntax-only -x c++ $(MKL_OUT)/inc.c; \
	  done; done; echo "mkl/include: every header compiles as strict C99 and C++17, LP64 and ILP64"
	@bad=$$(nm -D --defined-only $(LIBDIR)/libspgemm_mkl.so | awk '{print $$3}' | \
	  grep -v -E '^(mkl_sparse_|MKL_(Get_Version|Get_Max_Threads|Set_Num_Threads|malloc|free)$$|spgemm_mkl_last_error$$)' || true); \
	if [ -n "$$bad" ]; then echo "unexpected exported symbols:"; echo "$$bad"; exit 1; fi; \
	n=$$(nm -D --defined-only $(LIBDIR)/libspgemm_mkl.so | grep -c ' mkl_sparse_'); \
	if [ "$$n" != 78 ]; then echo "libspgemm_mkl.so exports $$n mkl_sparse_* functions, not 39 LP64 + 39 _64"; exit 1; fi; \
	echo "libspgemm_mkl.so: 78 mkl_sparse_* (39 LP64 + 39 _64), 5 MKL_* service functions, spgemm_mkl_last_error"
	@if [ -d "$(ANCHORS)/src" ]; then CC=$(CC) PY=$(PY) LIBDIR=$(abspath $(LIBDIR)) scripts/mkl_anchors.sh layer $(ANCHORS) $(MKL_OUT)/anchors; \
	else echo "anchors skipped: $(ANCHORS)/src not found (mkl_spgemm.c and mkl_spmm.c are not vendored)"; fi

# ---- Distributed SpMM over MPI (feature `mpi`; docs/DISTRIBUTED.md) ----
# Built in its own target directory, so that the library of the other targets (built
# without the feature) and this one never replace each other's files. Skipped, with a
# message, where mpicc or mpirun is missing (.ci/run installs Open MPI). Runs: clippy of
# every target with the feature, scripts/dist_check.sh (spgemm-dist-check under mpirun at
# 1, 2, 3, 4 ranks and 4 on a 2 x 2 grid; with --spgemm at 1 to 4 ranks), then the C ABI
# tests ffi-tests/mpi/dist_spmm.c and dist_spgemm.c (mpicc, no sanitizers: Open MPI's own
# allocations would be reported) at $(DIST_NP) ranks, the C++ layer's test
# ffi-tests/mpi/dist_cxx.cpp (1, 3 ranks) and the examples examples-c/dist_spmm.c (2, 4
# ranks), examples-c/dist_spgemm_petsc.c (1, 3), examples-fortran/dist_spmm.f90 (1, 3) and
# examples-fortran/dist_amg.f90 (2, 4); last `make install MPI=1` into build/prefix-mpi and
# examples-c/dist_spmm.c and dist_spgemm_petsc.c built with $(CC) and nothing but
# `pkg-config --cflags --libs spgemm` of that copy, and dist_spmm.c with CMake's
# find_package(spgemm) (spgemm::spgemm brings MPI::MPI_C), run at 2 ranks. DIST_CHECK=0 skips it.
DIST_CHECK  ?= 1
DIST_NP     ?= 1 2 3 4
MPI_TARGET  := target/mpi
MPI_LIBDIR  := $(MPI_TARGET)/$(PROFILE)
MPICC       ?= mpicc
MPICXX      ?= mpicxx
MPIFORT     ?= mpifort
MPIRUN      := mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)
MPI_ENV     := OMPI_MCA_osc=$${OMPI_MCA_osc:-^ucx} \
	OMPI_MCA_btl_vader_single_copy_mechanism=$${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
dist-check: | $(BUILD)
ifeq ($(DIST_CHECK),0)
	@echo "dist-check skipped (DIST_CHECK=0)"
else
	@if ! command -v $(MPICC) >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then \
	  echo "dist-check SKIPPED: $(MPICC) or mpirun not found (scripts/install_deps.sh check installs openmpi-bin libopenmpi-dev libclang-dev)"; \
	else $(MAKE) --no-print-directory dist-check-run; fi
endif

dist-check-run:
	CARGO_TARGET_DIR=$(MPI_TARGET) $(CARGO) clippy --release --features mpi --all-targets -- -D warnings
	CARGO_TARGET_DIR=$(MPI_TARGET) scripts/dist_check.sh
	CARGO_TARGET_DIR=$(MPI_TARGET) $(CARGO) build --release --features mpi --lib
	ln -sf libspgemm.so $(MPI_LIBDIR)/libspgemm.so.0
	@mkdir -p $(BUILD)/mpi
	$(MPICC) -g -O1 $(CFLAGS_STRICT) -Iinclude ffi-tests/mpi/dist_spmm.c -o $(BUILD)/mpi/dist_spmm \
	  -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR)) -lm
	@set -e; for np in $(DIST_NP); do echo "== mpirun -np $$np $(BUILD)/mpi/dist_spmm"; \
	  $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_spmm; done
	$(MPICC) -g -O1 $(CFLAGS_STRICT) -Iinclude ffi-tests/mpi/dist_spgemm.c -o $(BUILD)/mpi/dist_spgemm \
	  -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR)) -lm
	@set -e; for np in $(DIST_NP); do echo "== mpirun -np $$np $(BUILD)/mpi/dist_spgemm"; \
	  $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_spgemm; done
	$(MPICXX) -g -std=c++17 -Wall -Wextra -Werror -Iinclude ffi-tests/mpi/dist_cxx.cpp -o $(BUILD)/mpi/dist_cxx \
	  -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR))
	@set -e; for np in 1 3; do echo "== mpirun -np $$np $(BUILD)/mpi/dist_cxx"; \
	  $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_cxx; done
	$(MPICC) -O2 $(CFLAGS_STRICT) -Iinclude examples-c/dist_spmm.c -o $(BUILD)/mpi/dist_spmm_c \
	  -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR)) -lm
	@set -e; for np in 2 4; do echo "== mpirun -np $$np $(BUILD)/mpi/dist_spmm_c"; \
	  $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_spmm_c; done
	$(MPICC) -O2 $(CFLAGS_STRICT) -Iinclude examples-c/dist_spgemm_petsc.c -o $(BUILD)/mpi/dist_spgemm_petsc \
	  -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR)) -lm
	@set -e; for np in 1 3; do echo "== mpirun -np $$np $(BUILD)/mpi/dist_spgemm_petsc"; \
	  $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_spgemm_petsc; done
	@if command -v $(MPIFORT) >/dev/null 2>&1; then set -e; \
	  $(MPIFORT) -std=f2008 -Wall -Werror -J$(BUILD)/mpi include/spgemm.f90 examples-fortran/dist_spmm.f90 \
	    -o $(BUILD)/mpi/dist_spmm_f -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR)); \
	  for np in 1 3; do echo "== mpirun -np $$np $(BUILD)/mpi/dist_spmm_f"; \
	    $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_spmm_f; done; \
	  $(MPIFORT) -std=f2008 -Wall -Werror -J$(BUILD)/mpi include/spgemm.f90 examples-fortran/dist_amg.f90 \
	    -o $(BUILD)/mpi/dist_amg_f -L$(MPI_LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(MPI_LIBDIR)); \
	  for np in 2 4; do echo "== mpirun -np $$np $(BUILD)/mpi/dist_amg_f"; \
	    $(MPI_ENV) timeout 600 $(MPIRUN) -np $$np $(BUILD)/mpi/dist_amg_f; done; \
	else echo "$(MPIFORT) not found: the Fortran example is not run"; fi
	rm -rf $(BUILD)/prefix-mpi
	$(MAKE) --no-print-directory install MPI=1 PREFIX=$(abspath $(BUILD))/prefix-mpi
	@set -e; pc=$(BUILD)/prefix-mpi/lib/pkgconfig; \
	  test "$$(PKG_CONFIG_PATH=$$pc pkg-config --variable=mpi spgemm)" = yes; \
	  for ex in dist_spmm dist_spgemm_petsc; do \
	    $(CC) -O2 $(CFLAGS_STRICT) examples-c/$$ex.c -o $(BUILD)/mpi/$${ex}_installed \
	      $$(PKG_CONFIG_PATH=$$pc pkg-config --cflags --libs spgemm) -Wl,-rpath,$(abspath $(BUILD))/prefix-mpi/lib -lm; \
	    echo "== mpirun -np 2 $(BUILD)/mpi/$${ex}_installed ($(CC) with pkg-config spgemm of the MPI=1 install)"; \
	    $(MPI_ENV) timeout 600 $(MPIRUN) -np 2 $(BUILD)/mpi/$${ex}_installed; done
	@if command -v cmake >/dev/null 2>&1; then set -e; rm -rf $(BUILD)/mpi/cmake; \
	  cmake -S examples-c -B $(BUILD)/mpi/cmake -DCMAKE_PREFIX_PATH=$(abspath $(BUILD))/prefix-mpi \
	    -DCMAKE_C_COMPILER=$(CC) -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null; \
	  cmake --build $(BUILD)/mpi/cmake --target dist_spmm >/dev/null; \
	  echo "== mpirun -np 2 $(BUILD)/mpi/cmake/dist_spmm (find_package(spgemm) of the MPI=1 install)"; \
	  $(MPI_ENV) timeout 600 $(MPIRUN) -np 2 $(BUILD)/mpi/cmake/dist_spmm; \
	else echo "cmake not found: the CMake build of the MPI install is not checked"; fi

# ---- PETSc peer driver (not part of `make check`) ----
# build/petsc_dist: PETSc's MatMatMult / MatPtAP / MatMatMatMult / MatTransposeMatMult and
# AIJ x dense on the libspgemm row/column split, one JSON line per run; driven by
# scripts/bench_dist_petsc.sh. Needs mpicc and a PETSc with a pkg-config file (Debian:
# petsc-dev). PETSc's headers come in with -isystem: the driver itself is -Wall -Wextra clean.
PETSC_PC      ?= PETSc
petsc-driver: | $(BUILD)
	@command -v $(MPICC) >/dev/null 2>&1 || { echo "petsc-driver: $(MPICC) not found"; exit 1; }
	@pkg-config --exists $(PETSC_PC) || { echo "petsc-driver: pkg-config finds no $(PETSC_PC) (Debian: apt-get install petsc-dev)"; exit 1; }
	$(MPICC) -O2 -std=c99 -Wall -Wextra -Werror \
	  $$(pkg-config --cflags-only-I $(PETSC_PC) | sed 's/-I/-isystem /g') $$(pkg-config --cflags-only-other $(PETSC_PC)) \
	  bench/petsc/petsc_dist.c -o $(BUILD)/petsc_dist \
	  $$(pkg-config --libs $(PETSC_PC)) -Wl,-rpath,$$(pkg-config --variable=libdir $(PETSC_PC)) -lm

# ---- Installation (GNU conventions: PREFIX, DESTDIR, libdir, includedir) ----
PREFIX     ?= /usr/local
libdir     ?= $(PREFIX)/lib
includedir ?= $(PREFIX)/include
VERSION    := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
SOVERSION  := 0
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
VERSION_MINOR := $(word 2,$(subst ., ,$(VERSION)))
# System libraries the Rust runtime in libspgemm.a needs (rustc --print native-static-libs).
# hwloc (and libudev, which hwloc links) come from the topology layer.
NATIVE_LIBS := -lhwloc -ludev -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
INSTALL    ?= install
PY         ?= python3
# MPI=1: the pkg-config module of the MPI the library links (Debian's mpi-c names the
# default MPI), required by spgemm.pc so that a caller's flags bring mpi.h and libmpi.
MPI_PC     ?= $(if $(filter 1,$(MPI)),$(firstword $(foreach m,mpi-c ompi-c mpich,$(shell pkg-config --exists $(m) 2>/dev/null && echo $(m)))))
# Fortran compiler (make's built-in default, f77, is not one that reads Fortran 2008).
ifeq ($(origin FC),default)
FC := gfortran
endif

# Real file libspgemm.so.$(VERSION); libspgemm.so.0 (the soname) and libspgemm.so (for -l)
# are symbolic links, as distributions and HPC module trees expect.
install: lib mkl-lib
	@if [ "$(MPI)" = 1 ] && [ -z "$(MPI_PC)" ]; then \
	  echo "install MPI=1: pkg-config finds no MPI module (mpi-c, ompi-c, mpich); set MPI_PC"; exit 1; fi
	$(INSTALL) -d $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(libdir)/cmake/spgemm $(DESTDIR)$(includedir)
	$(INSTALL) -m 755 $(LIBDIR)/libspgemm.so $(DESTDIR)$(libdir)/libspgemm.so.$(VERSION)
	strip --strip-debug $(DESTDIR)$(libdir)/libspgemm.so.$(VERSION)
	if [ "$(INSTALL_DEBUG)" = 1 ]; then \
	  objcopy --only-keep-debug $(LIBDIR)/libspgemm.so $(DESTDIR)$(libdir)/libspgemm.so.debug && \
	  chmod 644 $(DESTDIR)$(libdir)/libspgemm.so.debug && \
	  objcopy --add-gnu-debuglink=$(DESTDIR)$(libdir)/libspgemm.so.debug $(DESTDIR)$(libdir)/libspgemm.so.$(VERSION); fi
	ln -sf libspgemm.so.$(VERSION) $(DESTDIR)$(libdir)/libspgemm.so.$(SOVERSION)
	ln -sf libspgemm.so.$(SOVERSION) $(DESTDIR)$(libdir)/libspgemm.so
	$(INSTALL) -m 644 $(LIBDIR)/libspgemm.a $(DESTDIR)$(libdir)/libspgemm.a
	strip --strip-debug $(DESTDIR)$(libdir)/libspgemm.a
	$(INSTALL) -m 644 include/spgemm.h include/spgemm.hpp include/spgemm.f90 $(DESTDIR)$(includedir)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(libdir)|' -e 's|@INCLUDEDIR@|$(includedir)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@NATIVE_LIBS@|$(NATIVE_LIBS)|' \
	    -e 's|@MPI@|$(if $(filter 1,$(MPI)),yes,no)|' -e 's|@REQUIRES@|$(MPI_PC)|' -e '/^Requires: *$$/d' \
	    pkgconfig/spgemm.pc.in > $(DESTDIR)$(libdir)/pkgconfig/spgemm.pc
	sed -e 's|@REL_LIBDIR@|'"$$(realpath -m --relative-to=$(libdir)/cmake/spgemm $(libdir))"'|' \
	    -e 's|@REL_INCLUDEDIR@|'"$$(realpath -m --relative-to=$(libdir)/cmake/spgemm $(includedir))"'|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@SOVERSION@|$(SOVERSION)|' \
	    -e 's|@NATIVE_LIBS_CMAKE@|$(subst $(space),;,$(patsubst -l%,%,$(NATIVE_LIBS)))|' \
	    -e 's|@SPGEMM_MPI@|$(if $(filter 1,$(MPI)),ON,OFF)|' \
	    cmake/spgemmConfig.cmake.in > $(DESTDIR)$(libdir)/cmake/spgemm/spgemmConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|' \
	    -e 's|@VERSION_MINOR@|$(VERSION_MINOR)|' -e 's|@SIZEOF_VOID_P@|8|' \
	    cmake/spgemmConfigVersion.cmake.in > $(DESTDIR)$(libdir)/cmake/spgemm/spgemmConfigVersion.cmake
	$(INSTALL) -d $(DESTDIR)$(includedir)/spgemm-mkl
	$(INSTALL) -m 755 $(LIBDIR)/libspgemm_mkl.so $(DESTDIR)$(libdir)/libspgemm_mkl.so.$(VERSION)
	strip --strip-debug $(DESTDIR)$(libdir)/libspgemm_mkl.so.$(VERSION)
	ln -sf libspgemm_mkl.so.$(VERSION) $(DESTDIR)$(libdir)/libspgemm_mkl.so.$(SOVERSION)
	ln -sf libspgemm_mkl.so.$(SOVERSION) $(DESTDIR)$(libdir)/libspgemm_mkl.so
	$(INSTALL) -m 644 $(LIBDIR)/libspgemm_mkl.a $(DESTDIR)$(libdir)/libspgemm_mkl.a
	strip --strip-debug $(DESTDIR)$(libdir)/libspgemm_mkl.a
	$(INSTALL) -m 644 mkl/include/mkl.h mkl/include/mkl_types.h mkl/include/mkl_spblas.h \
	  mkl/include/mkl_service.h $(DESTDIR)$(includedir)/spgemm-mkl/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(libdir)|' -e 's|@INCLUDEDIR@|$(includedir)|' \
	    -e 's|@VERSION@|$(VERSION)|' pkgconfig/spgemm-mkl.pc.in > $(DESTDIR)$(libdir)/pkgconfig/spgemm-mkl.pc
	@echo "installed libspgemm $(VERSION) under $(DESTDIR)$(PREFIX)"

space := $(subst ,, )

# ---- Fortran module: generated from the C header ----
# Regenerate after changing include/spgemm.h.
fortran-module:
	$(PY) scripts/gen_fortran.py

# The committed module matches the header (the parse-level comparison of every interface
# with its C prototype is the Rust test tests/fortran_module.rs), and compiles as strict
# Fortran 2008.
fortran-check: | $(BUILD)
	$(PY) scripts/gen_fortran.py --check
	$(PY) scripts/test_gen_fortran.py
	@if command -v $(FC) >/dev/null 2>&1; then \
	  mkdir -p $(BUILD)/fortran-check && \
	  $(FC) -std=f2008 -Wall -Wextra -Werror -fsyntax-only -J$(BUILD)/fortran-check include/spgemm.f90 && \
	  echo "include/spgemm.f90 compiles with $(FC) -std=f2008 -Wall -Wextra -Werror"; \
	else echo "$(FC) not found"; exit 1; fi


# Installs into a temporary prefix and builds and runs every example from there, as a
# downstream user would: with pkg-config and with CMake (C examples also under ASan+UBSan).
examples-check: lib | $(BUILD)
	rm -rf $(BUILD)/prefix $(BUILD)/destdir $(BUILD)/downstream
	$(MAKE) --no-print-directory install PREFIX=$(abspath $(BUILD))/prefix
	$(MAKE) --no-print-directory install PREFIX=/opt/spgemm DESTDIR=$(abspath $(BUILD))/destdir >/dev/null
	test -f $(BUILD)/destdir/opt/spgemm/lib/pkgconfig/spgemm.pc
	test "$$(readlink $(BUILD)/destdir/opt/spgemm/lib/libspgemm.so)" = libspgemm.so.$(SOVERSION)
	grep -q '^prefix=/opt/spgemm$$' $(BUILD)/destdir/opt/spgemm/lib/pkgconfig/spgemm.pc
	grep -q '^prefix=/opt/spgemm$$' $(BUILD)/destdir/opt/spgemm/lib/pkgconfig/spgemm-mkl.pc
	test "$$(readlink $(BUILD)/destdir/opt/spgemm/lib/libspgemm_mkl.so)" = libspgemm_mkl.so.$(SOVERSION)
	test -f $(BUILD)/destdir/opt/spgemm/include/spgemm-mkl/mkl_spblas.h
	FC=$(FC) CC=$(CC) CXX=$(CXX) scripts/check_downstream.sh $(abspath $(BUILD))/prefix $(abspath $(BUILD))/downstream

# ---- Fuzzing the C ABI (fuzz/README.md) and valgrind (docs/ROBUSTNESS.md) ----
# libFuzzer comes with Debian's clang (package libclang-rt-14-dev). The harness is built with
# ASan+UBSan; libspgemm is not (Rust sanitizers need a nightly compiler) but carries
# SanitizerCoverage's counters (fuzz-lib below).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= 5000
FUZZ_ARTIFACTS := $(BUILD)/fuzz-artifacts
FUZZ_ENV     := ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 RUST_BACKTRACE=0
# -entropic=0: libFuzzer's entropic schedule updates per-feature frequencies with a linear
# search on every execution; with the library's 273k counters that was 60% of the time
# (36 against 119 executions/s, docs/ROBUSTNESS.md).
FUZZ_FLAGS   := -entropic=0 -timeout=20 -rss_limit_mb=4096 -max_len=4096 -print_final_stats=1 \
	-artifact_prefix=$(FUZZ_ARTIFACTS)/
VALGRIND     ?= valgrind
VALGRIND_FLAGS := --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --suppressions=fuzz/valgrind.supp
# hwloc's x86 backend prints a notice to stderr under valgrind (it cannot run CPUID there).
VALGRIND_ENV := RUST_BACKTRACE=0 HWLOC_COMPONENTS=-x86 SPGEMM_FUZZ_MALLOC=1

.PHONY: fuzz fuzz-build fuzz-check fuzz-replay valgrind

# The library libFuzzer drives, built with SanitizerCoverage's inline 8-bit counters and PC
# table (the LLVM pass by name, which stable rustc accepts), so that inputs are kept for the
# library's branches they reach, not only the harness's. `--target` keeps the flags off
# build scripts and proc macros (host programs, not linked with libFuzzer's runtime). Only
# spgemm_fuzz links it: its counters resolve against libFuzzer's runtime.
HOST_TRIPLE := $(or $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p'),x86_64-unknown-linux-gnu)
FUZZ_LIBDIR := target/fuzz-cov/$(HOST_TRIPLE)/release
FUZZ_RUSTFLAGS := -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=3 \
	-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table
.PHONY: fuzz-lib
fuzz-lib:
	RUSTFLAGS="$(FUZZ_RUSTFLAGS)" $(CARGO) build --release --lib --target $(HOST_TRIPLE) \
	  --target-dir target/fuzz-cov
	ln -sf libspgemm.so $(FUZZ_LIBDIR)/libspgemm.so.0

# Relinked whenever fuzz-lib ran (the counters' module is the library's build).
$(FUZZ_LIBDIR)/libspgemm.so.0: fuzz-lib ;

$(BUILD)/spgemm_fuzz: fuzz/spgemm_fuzz.c include/spgemm.h $(FUZZ_LIBDIR)/libspgemm.so.0 | $(BUILD)
	$(FUZZ_CC) -g -O1 $(CFLAGS_STRICT) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -fno-omit-frame-pointer -Iinclude fuzz/spgemm_fuzz.c -o $@ -L$(FUZZ_LIBDIR) -lspgemm \
	  -Wl,-rpath,$(abspath $(FUZZ_LIBDIR)) -lm

# The same harness with a plain main() instead of libFuzzer: any C compiler, runs files once.
$(BUILD)/fuzz_replay: fuzz/spgemm_fuzz.c include/spgemm.h | $(BUILD)
	$(CC) -g -O1 $(CFLAGS_STRICT) -DSPGEMM_FUZZ_REPLAY -Iinclude $< -o $@ $(LINK_SO) -lm

fuzz-build: lib fuzz-lib $(BUILD)/spgemm_fuzz $(BUILD)/fuzz_replay

# FUZZ_SECONDS of fuzzing from the committed corpus (new inputs go to build/fuzz-corpus, so
# the committed corpus only changes by hand); crashes are written to build/fuzz-artifacts/.
fuzz: fuzz-build
	mkdir -p $(FUZZ_ARTIFACTS) $(BUILD)/fuzz-corpus
	$(FUZZ_ENV) $(BUILD)/spgemm_fuzz $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	  $(BUILD)/fuzz-corpus fuzz/corpus

# Short fixed-seed pass for `make check` (~30 s): the corpus (3,134 inputs), then mutations with -seed=1
# up to FUZZ_RUNS executions in all.
# New units go to a scratch directory emptied first, so every run starts from the same corpus.
fuzz-check: fuzz-build
	rm -rf $(BUILD)/fuzz-check-corpus
	mkdir -p $(FUZZ_ARTIFACTS) $(BUILD)/fuzz-check-corpus
	$(FUZZ_ENV) $(BUILD)/spgemm_fuzz $(FUZZ_FLAGS) -seed=1 -runs=$(FUZZ_RUNS) $(BUILD)/fuzz-check-corpus fuzz/corpus

# The long run of docs/ROBUSTNESS.md: FUZZ_JOBS workers (libFuzzer's fork mode, a finding
# does not end it) for FUZZ_SECONDS at nice 19, from build/fuzz-long/corpus (kept between
# runs, seeded from fuzz/corpus). The harness and the library are copied there first, so
# rebuilds meanwhile do not change what runs; the log is build/fuzz-long/run.log (its last
# "#N:" line is the execution count).
# The jobs' scratch corpora on tmpfs where there is one (a tenth of a job's time went to
# creating files on ext4); -print_funcs=0: no llvm-symbolizer run for every new function.
# SPGEMM_PROC_BIND=none: the harness's handles with a worker per core would pin worker i to
# core i in every job (1-thread ones pinned to core 0 before a01c420); one job more than
# cores fills the gaps of a job's thread handoffs (20-30% of the CPUs idle with one job per
# core, pinned; docs/ROBUSTNESS.md, segments 23-24).
FUZZ_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
FUZZ_TMPDIR ?= $(if $(wildcard /dev/shm),/dev/shm,/tmp)
FUZZ_LONG := $(BUILD)/fuzz-long
.PHONY: fuzz-long
fuzz-long: fuzz-build
	mkdir -p $(FUZZ_LONG)/corpus $(FUZZ_LONG)/artifacts $(FUZZ_LONG)/lib
	cp -n fuzz/corpus/* $(FUZZ_LONG)/corpus/
	rm -f $(FUZZ_LONG)/lib/libspgemm.so.0 $(FUZZ_LONG)/spgemm_fuzz
	cp $(FUZZ_LIBDIR)/libspgemm.so.0 $(FUZZ_LONG)/lib/libspgemm.so.0
	cp $(BUILD)/spgemm_fuzz $(FUZZ_LONG)/spgemm_fuzz
	cd $(FUZZ_LONG) && LD_LIBRARY_PATH=$$PWD/lib TMPDIR=$(FUZZ_TMPDIR) SPGEMM_PROC_BIND=none $(FUZZ_ENV) nice -n 19 ./spgemm_fuzz \
	  -fork=$(FUZZ_JOBS) -entropic=0 -print_funcs=0 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=20 \
	  -rss_limit_mb=4096 -max_len=4096 -artifact_prefix=artifacts/ -print_final_stats=1 \
	  -max_total_time=$(FUZZ_SECONDS) corpus > run.log 2>&1; \
	  grep '^#' run.log | tail -1

# The corpus through the replay build (no libFuzzer, no sanitizers), e.g. with CC=gcc.
fuzz-replay: lib $(BUILD)/fuzz_replay
	RUST_BACKTRACE=0 $(BUILD)/fuzz_replay fuzz/corpus

# ffi-tests programs and the corpus replay built without sanitizers, each run under valgrind:
# no error and nothing definitely lost (rayon's "possibly lost"/"still reachable" are allowed).
valgrind: lib | $(BUILD)
	@mkdir -p $(BUILD)/valgrind
	@set -e; for src in ffi-tests/*.c; do \
	  t=$(BUILD)/valgrind/$$(basename $$src .c); \
	  $(CC) -g -O1 $(CFLAGS_STRICT) -pthread -Iinclude $$src -o $$t $(LINK_SO) -lm; \
	done
	@set -e; for src in ffi-tests/*.cpp; do \
	  t=$(BUILD)/valgrind/$$(basename $$src .cpp); \
	  $(CXX) -g -O1 -std=c++17 -Wall -Wextra -Werror -pthread -Iinclude $$src -o $$t $(LINK_SO); \
	done
	$(CC) -g -O1 $(CFLAGS_STRICT) -DSPGEMM_FUZZ_REPLAY -Iinclude fuzz/spgemm_fuzz.c -o $(BUILD)/valgrind/fuzz_replay $(LINK_SO) -lm
	@rc=0; for t in $(BUILD)/valgrind/*; do \
	  [ -x $$t ] || continue; \
	  case $$(basename $$t) in fuzz_replay) args=fuzz/corpus;; *) args=;; esac; \
	  echo "== valgrind $$t $$args"; \
	  if $(VALGRIND_ENV) $(VALGRIND) $(VALGRIND_FLAGS) --log-file=$$t.vg.log $$t $$args > $$t.out 2>&1; then \
	    tail -n 1 $$t.out; grep -E 'ERROR SUMMARY|definitely lost' $$t.vg.log | sed 's/^==[0-9]*== /   /'; \
	  else rc=1; \
	    if grep -q 'ERROR SUMMARY: 0 errors' $$t.vg.log && ! grep -qE 'definitely lost: [1-9]' $$t.vg.log; then \
	      echo "FAILED: $$t: valgrind found nothing (0 errors, 0 definitely lost); the program's own checks failed:"; \
	    else echo "FAILED: $$t: valgrind errors or definite leaks (log: $$t.vg.log)"; \
	      grep -E -A12 'ERROR SUMMARY|definitely lost in' $$t.vg.log | head -60; fi; \
	    grep -E 'FAIL|FAILURE|passed' $$t.out | head -20; fi; \
	done; exit $$rc
