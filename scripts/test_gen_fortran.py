#!/usr/bin/env python3
"""Tests of scripts/gen_fortran.py on synthetic headers: a new function (such as a future
spgemm_spmm) gets an interface without touching the generator, unknown C types are
refused instead of guessed, and Fortran name clashes are caught. Run by `make check`."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fortran  # noqa: E402

BASE = """
typedef struct spgemm_handle_t spgemm_handle_t;
typedef struct spgemm_matrix_t spgemm_matrix_t;
typedef int32_t spgemm_status_t;
typedef int32_t spgemm_value_type_t;
// The call succeeded.
#define SPGEMM_STATUS_SUCCESS 0
#ifdef __cplusplus
extern "C" {
#endif // __cplusplus
const char *spgemm_last_error(const spgemm_handle_t *handle);
%s
#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus
"""


def gen(extra):
    return gen_fortran.generate(BASE % extra)


class GeneratorTest(unittest.TestCase):
    def test_new_function_is_picked_up(self):
        text = gen(
            "// Y = alpha*A*X + beta*Y.\n"
            "spgemm_status_t spgemm_spmm(spgemm_handle_t *handle,\n"
            "                            const spgemm_matrix_t *a,\n"
            "                            int64_t k,\n"
            "                            double alpha,\n"
            "                            const void *x,\n"
            "                            size_t ldx,\n"
            "                            float beta,\n"
            "                            void *y,\n"
            "                            int64_t *flops);"
        )
        self.assertIn('bind(C, name="spgemm_spmm") result(status)', text)
        self.assertIn("public :: spgemm_spmm", text)
        self.assertIn("! Y = alpha*A*X + beta*Y.", text)
        for decl in [
            "type(c_ptr), value :: handle",
            "type(c_ptr), value :: a",
            "integer(c_int64_t), value :: k",
            "real(c_double), value :: alpha",
            "type(c_ptr), value :: x",
            "integer(c_size_t), value :: ldx",
            "real(c_float), value :: beta",
            "type(c_ptr), value :: y",
            "integer(c_int64_t), intent(out) :: flops",
        ]:
            self.assertIn(decl, text)

    def test_output_pointers_are_by_reference(self):
        text = gen(
            "spgemm_status_t spgemm_f(spgemm_matrix_t **m, const void **p, const int32_t *q);"
        )
        self.assertIn("type(c_ptr), intent(out) :: m", text)
        self.assertIn("type(c_ptr), intent(out) :: p", text)
        self.assertIn("integer(c_int32_t), intent(in) :: q", text)

    def test_result_name_avoids_parameter_names(self):
        text = gen("const char *spgemm_status_string(spgemm_status_t status);")
        self.assertIn("result(res)", text)

    def test_unknown_type_is_refused(self):
        with self.assertRaises(gen_fortran.GenError):
            gen("spgemm_status_t spgemm_g(struct foo *x);")
        with self.assertRaises(gen_fortran.GenError):
            gen("spgemm_status_t spgemm_g(uint16_t x);")
        with self.assertRaises(gen_fortran.GenError):
            gen("spgemm_status_t spgemm_g(double **x);")

    def test_case_insensitive_clash_is_refused(self):
        with self.assertRaises(gen_fortran.GenError):
            gen("#define SPGEMM_G 3\nspgemm_status_t spgemm_g(int32_t x);")

    def test_non_literal_constant_is_refused(self):
        with self.assertRaises(gen_fortran.GenError):
            gen("#define SPGEMM_X (1 << 3)")

    def test_real_header_covers_every_prototype(self):
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "include", "spgemm.h"), encoding="utf-8") as fh:
            header = fh.read()
        _, _, _, functions = gen_fortran.parse_header(header)
        # Independent count: lines that open a prototype in the header.
        opening = [l for l in header.splitlines() if re.match(r"[A-Za-z_][\w *]*?\b(spgemm_|spmm)\w*\(", l)]
        self.assertEqual(len(functions), len(opening))
        text = gen_fortran.generate(header)
        for f in functions:
            self.assertIn(f'bind(C, name="{f["name"]}")', text)


if __name__ == "__main__":
    unittest.main(verbosity=1)
