/*
 * Minimal checked-test framework for the C ABI tests: every CHECK counts as one check;
 * check_report() prints "N passed, M failed" on a line of its own and returns the exit
 * status of the program (non-zero when anything failed).
 *
 * Failures print file:line and the failing expression, and (for status checks) the
 * library's status string and last error message, then the test goes on so that one run
 * shows every failure. With FFI_TESTS_VERBOSE set, every checked error message is printed.
 */
#ifndef FFI_TESTS_CHECK_H
#define FFI_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spgemm.h"

static int check_passed_ = 0;
static int check_failed_ = 0;

/* Records one check; returns cond so that callers can skip follow-up work on failure. */
static inline int check_impl(int cond, const char *expr, const char *file, int line) {
    if (cond) {
        check_passed_++;
    } else {
        check_failed_++;
        fprintf(stderr, "FAIL %s:%d: %s\n", file, line, expr);
    }
    return cond;
}

#define CHECK(cond) check_impl((cond) ? 1 : 0, #cond, __FILE__, __LINE__)

/* A status check: prints the status string and last error of handle h on failure. */
static inline int check_status_impl(spgemm_status_t got, spgemm_status_t want,
                                    const spgemm_handle_t *h, const char *expr,
                                    const char *file, int line) {
    if (got == want) {
        check_passed_++;
        return 1;
    }
    check_failed_++;
    fprintf(stderr, "FAIL %s:%d: %s returned %d (%s), expected %d (%s); last error: \"%s\"\n",
            file, line, expr, (int)got, spgemm_status_string(got), (int)want,
            spgemm_status_string(want), spgemm_last_error(h));
    return 0;
}

/* CHECK_OK(h, call): call must succeed; h is the handle whose last error is shown. */
#define CHECK_OK(h, call) \
    check_status_impl((call), SPGEMM_STATUS_SUCCESS, (h), #call, __FILE__, __LINE__)
#define CHECK_STATUS(h, call, want) \
    check_status_impl((call), (want), (h), #call, __FILE__, __LINE__)

static inline int is_word_char_(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* 1 if `word` occurs in `text` as a whole token (not inside a longer identifier or
 * number): "B" matches "matrix B, row 3" but not "Bad"; "3" does not match "13". */
static inline int has_word(const char *text, const char *word) {
    size_t n = strlen(word);
    const char *p = text;
    if (n == 0) return 1;
    while ((p = strstr(p, word)) != NULL) {
        int left_ok = (p == text) || !is_word_char_(p[-1]);
        int right_ok = !is_word_char_(p[n]);
        if (left_ok && right_ok) return 1;
        p++;
    }
    return 0;
}

/*
 * CHECK_ERR(h, call, want, words): the call returns status `want` and the last error of
 * h (NULL: the thread's) contains each whole word of the NULL-terminated list `words`.
 * Each word is one check, so a failure says which word is missing.
 */
static inline void check_err_impl(spgemm_status_t got, spgemm_status_t want,
                                  const spgemm_handle_t *h, const char *const *words,
                                  const char *expr, const char *file, int line) {
    const char *msg;
    if (!check_status_impl(got, want, h, expr, file, line)) return;
    msg = spgemm_last_error(h);
    if (getenv("FFI_TESTS_VERBOSE") != NULL) fprintf(stderr, "  %s:%d: \"%s\"\n", file, line, msg);
    if (!check_impl(msg != NULL && msg[0] != '\0', "last error is non-empty", file, line)) {
        return;
    }
    for (; words != NULL && *words != NULL; words++) {
        if (has_word(msg, *words)) {
            check_passed_++;
        } else {
            check_failed_++;
            fprintf(stderr, "FAIL %s:%d: %s: message \"%s\" lacks \"%s\"\n", file, line, expr,
                    msg, *words);
        }
    }
}

#define WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define CHECK_ERR(h, call, want, words) \
    check_err_impl((call), (want), (h), (words), #call, __FILE__, __LINE__)

static inline int check_report(void) {
    printf("%d passed, %d failed\n", check_passed_, check_failed_);
    fflush(stdout);
    return check_failed_ == 0 ? 0 : 1;
}

#endif /* FFI_TESTS_CHECK_H */
