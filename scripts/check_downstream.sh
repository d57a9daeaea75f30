#!/usr/bin/env bash
# Builds and runs every example against an installed libspgemm, the way a downstream
# project would: once with pkg-config and once with CMake (find_package(spgemm)); the MKL
# program mkl_drop_in.c with spgemm-mkl.pc and spgemm::mkl (also ILP64 and static). C
# examples also run under AddressSanitizer + UBSan. Any wrong answer (non-zero exit)
# fails the script.
#
# Usage: scripts/check_downstream.sh PREFIX BUILD_DIR
# Environment: CC, CXX, FC (default cc, c++, gfortran).
set -euo pipefail
prefix=$1
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-cc} CXX=${CXX:-c++} FC=${FC:-gfortran}
mkdir -p "$out"

# Small sizes: this runs in CI on every `make check`.
run_examples() {  # dir with the executables; an optional launcher environment
  local bin=$1
  "$bin/quickstart"
  "$bin/mkl_migration" 300 200 250
  "$bin/tpetra_petsc" 30 3
  "$bin/laplace_demo" 12 2
  "$bin/cpp_quickstart"
  "$bin/mkl_drop_in" 30
}
run_fortran() {
  local bin=$1
  "$bin/quickstart_f"
  "$bin/amg_setup" 10 10
}

echo "== downstream build with pkg-config ($prefix)"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc=$out/pkg-config
mkdir -p "$pc/asan" "$pc/fortran"
cflags=$(pkg-config --cflags spgemm)
libs="$(pkg-config --libs spgemm) -Wl,-rpath,$(pkg-config --variable=libdir spgemm)"
san="-g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
for ex in quickstart mkl_migration tpetra_petsc laplace_demo; do
  $CC -O2 -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$src/examples-c/$ex.c" $libs -lm -o "$pc/$ex"
  $CC $san -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$src/examples-c/$ex.c" $libs -lm -o "$pc/asan/$ex"
done
$CXX -O2 -std=c++17 -Wall -Wextra -Wpedantic -Werror $cflags "$src/examples-c/cpp_quickstart.cpp" $libs -o "$pc/cpp_quickstart"
# A program written for MKL: MKL's flags replaced by spgemm-mkl's, nothing else changed.
mkl_cflags=$(pkg-config --cflags spgemm-mkl)
mkl_libs="$(pkg-config --libs spgemm-mkl) -Wl,-rpath,$(pkg-config --variable=libdir spgemm-mkl)"
$CC -O2 -std=c99 -Wall -Wextra -pedantic -Werror $mkl_cflags "$src/examples-c/mkl_drop_in.c" $mkl_libs -lm -o "$pc/mkl_drop_in"
$CC $san -std=c99 -Wall -Wextra -pedantic -Werror $mkl_cflags "$src/examples-c/mkl_drop_in.c" $mkl_libs -lm -o "$pc/asan/mkl_drop_in"
$CC -O2 -std=c99 -Wall -Wextra -pedantic -Werror -DMKL_ILP64 $mkl_cflags "$src/examples-c/mkl_drop_in.c" $mkl_libs -lm \
  -o "$pc/mkl_drop_in_ilp64"
# Statically: libspgemm_mkl.a, libspgemm.a, then the system libraries.
mkl_libdir=$(pkg-config --variable=libdir spgemm-mkl)
$CC -O2 -std=c99 -Wall -Wextra -pedantic -Werror $mkl_cflags "$src/examples-c/mkl_drop_in.c" \
  "$mkl_libdir/libspgemm_mkl.a" "$mkl_libdir/libspgemm.a" $(pkg-config --libs-only-l --static spgemm | sed 's/-lspgemm//') \
  -lpthread -lm -o "$pc/mkl_drop_in_static"
if ldd "$pc/mkl_drop_in_static" | grep -q libspgemm; then
  echo "mkl_drop_in_static is linked against a shared libspgemm"; exit 1
fi
$CXX $san -std=c++17 -Wall -Wextra -Wpedantic -Werror $cflags "$src/examples-c/cpp_quickstart.cpp" $libs -o "$pc/asan/cpp_quickstart"
# Static linking: libspgemm.a plus the system libraries of Libs.private.
$CC -O2 -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$src/examples-c/quickstart.c" \
  "$(pkg-config --variable=libdir spgemm)/libspgemm.a" $(pkg-config --libs-only-l --static spgemm | sed 's/-lspgemm//') \
  -o "$pc/quickstart_static"
if ldd "$pc/quickstart_static" | grep -q libspgemm; then
  echo "quickstart_static is linked against the shared libspgemm"; exit 1
fi
# Fortran: compile the installed module source, then the programs.
fflags="-std=f2008 -Wall -Wextra -Werror -O2"
$FC $fflags -J"$pc/fortran" -c "$(pkg-config --variable=fortran_module spgemm)" -o "$pc/fortran/spgemm.o"
$FC $fflags -J"$pc/fortran" -I"$pc/fortran" "$src/examples-fortran/quickstart.f90" "$pc/fortran/spgemm.o" $libs -o "$pc/quickstart_f"
$FC $fflags -J"$pc/fortran" -I"$pc/fortran" -I"$src/examples-fortran" "$src/examples-fortran/amg_setup.f90" \
  "$pc/fortran/spgemm.o" $libs -o "$pc/amg_setup"

run_examples "$pc"
"$pc/quickstart_static"
"$pc/mkl_drop_in_ilp64" 30
"$pc/mkl_drop_in_static" 30
run_fortran "$pc"
echo "== C and C++ examples under ASan+UBSan"
ASAN_OPTIONS=detect_leaks=1 run_examples "$pc/asan"

echo "== downstream build with CMake (find_package(spgemm))"
cm=$out/cmake
cmake -S "$src/examples-c" -B "$cm/c" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$cm/c" -j 2 >/dev/null
cmake -S "$src/examples-fortran" -B "$cm/fortran" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_Fortran_COMPILER="$FC" \
  -DCMAKE_Fortran_FLAGS="-std=f2008 -Wall -Wextra -Werror" >/dev/null
cmake --build "$cm/fortran" -j 2 >/dev/null
run_examples "$cm/c"
"$cm/c/quickstart_static"
"$cm/c/mkl_drop_in_static" 30
run_fortran "$cm/fortran"
echo "== every example passed (pkg-config, CMake, ASan)"
