# libspgemm: build, demo, tests, install.
#   make demo     build the library and run the demo (7-point 3D Laplacian, C = A*A + reuse)
#   make check    every test: formatting, lints, Rust tests, C/C++ ABI tests under sanitizers

CARGO   ?= cargo
CC      ?= cc
CXX     ?= c++
PROFILE := release
LIBDIR  := target/$(PROFILE)
BUILD   := build
CFLAGS_STRICT := -std=c99 -Wall -Wextra -pedantic -Werror
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LINK_SO := -L$(LIBDIR) -lspgemm -Wl,-rpath,$(abspath $(LIBDIR))

.PHONY: all lib demo check lint rust-test c-test header-check symbols clean

all: lib

# The shared library carries the soname libspgemm.so.0; the symlink lets the loader find it.
lib:
	$(CARGO) build --release --lib
	ln -sf libspgemm.so $(LIBDIR)/libspgemm.so.0

$(BUILD):
	mkdir -p $(BUILD)

demo: lib | $(BUILD)
	$(CC) -O2 $(CFLAGS_STRICT) -Iinclude examples-c/laplace_demo.c -o $(BUILD)/laplace_demo $(LINK_SO) -lm
	$(BUILD)/laplace_demo

check: lint rust-test c-test

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

rust-test:
	$(CARGO) test --release

c-test: lib header-check symbols | $(BUILD)
	@set -e; for src in ffi-tests/*.c; do [ -e "$$src" ] || continue; \
	  t=$(BUILD)/$$(basename $$src .c); \
	  echo "== $$t (ASan+UBSan)"; \
	  $(CC) -g $(CFLAGS_STRICT) $(SAN) -Iinclude $$src -o $$t $(LINK_SO) -lm; \
	  ASAN_OPTIONS=detect_leaks=1 $$t; \
	done
	@set -e; for src in ffi-tests/*.cpp; do [ -e "$$src" ] || continue; \
	  t=$(BUILD)/$$(basename $$src .cpp); \
	  echo "== $$t (C++17, ASan+UBSan)"; \
	  $(CXX) -g -std=c++17 -Wall -Wextra -Werror $(SAN) -Iinclude $$src -o $$t $(LINK_SO); \
	  $$t; \
	done

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

clean:
	$(CARGO) clean
	rm -rf $(BUILD)
