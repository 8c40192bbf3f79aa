/* Unit tests for loader/engine/ops_meta.c: the DELETE and HEAD rows beside GET and PUT, names, and which ops go once. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "worker_int.h"

static void test_rows(void **state)
{
    (void)state;
    const char *names[] = {[RB_LOAD_GET] = "GET", [RB_LOAD_PUT] = "PUT", [RB_LOAD_DELETE] = "DELETE",
                           [RB_LOAD_HEAD] = "HEAD"};
    for (int op = RB_LOAD_GET; op <= RB_LOAD_HEAD; op++) {
        const struct rb_xfer_op *row = rb_xfer_op_for((enum rb_load_op)op);
        assert_non_null(row);
        assert_non_null(row->prepare);
        assert_non_null(row->bytes);
        assert_string_equal(row->name, names[op]);
        assert_string_equal(rb_load_op_name((enum rb_load_op)op), names[op]);
    }
    assert_null(rb_xfer_op_for((enum rb_load_op)(RB_LOAD_HEAD + 1)));
    assert_string_equal(rb_load_op_name((enum rb_load_op)99), "?");
    /* DELETE and HEAD move no payload bytes, whatever the request saw. */
    struct rb_req r;
    memset(&r, 0, sizeof r);
    r.body = 123;
    r.put_size = 456;
    assert_int_equal(rb_xfer_op_for(RB_LOAD_DELETE)->bytes(&r), 0);
    assert_int_equal(rb_xfer_op_for(RB_LOAD_HEAD)->bytes(&r), 0);
}

static void test_once(void **state)
{
    (void)state;
    assert_true(rb_load_op_once(RB_LOAD_PUT));
    assert_true(rb_load_op_once(RB_LOAD_DELETE));
    assert_false(rb_load_op_once(RB_LOAD_GET));
    assert_false(rb_load_op_once(RB_LOAD_HEAD));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
