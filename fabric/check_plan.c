/* railbench fabric check: the round-robin tournament schedule of host pairs (circle method), O(1) per pair. */
#include "fabcheck_int.h"

#include <errno.h>

/* Players of the tournament: n, plus a bye when n is odd. */
static int players(int n)
{
    return n % 2 ? n + 1 : n;
}

int rb_check_plan_rounds(int n)
{
    return n < 2 ? 0 : players(n) - 1;
}

int rb_check_plan_pairs(int n)
{
    return n < 2 ? 0 : n / 2;
}

int rb_check_plan_partner(int n, int round, int h)
{
    if (n < 2 || round < 0 || round >= rb_check_plan_rounds(n) || h < 0 || h >= n)
        return -1;
    int m = players(n), k = m - 1, p;
    /* Player k sits in the centre; the others stand on a circle turned by one each round. */
    if (h == k)
        p = round;
    else if (h == round)
        p = k;
    else
        p = ((2 * round - h) % k + k) % k;
    return p >= n ? -1 : p; /* player n exists only when n is odd: the bye */
}

int rb_check_plan_pair(int n, int round, int i, int *a, int *b)
{
    if (n < 2 || round < 0 || round >= rb_check_plan_rounds(n) || i < 0 || i >= rb_check_plan_pairs(n))
        return -EINVAL;
    int m = players(n), k = m - 1;
    int j = n % 2 ? i + 1 : i; /* odd n: slot 0 is the bye */
    int x, y;
    if (j == 0) {
        x = round;
        y = k;
    } else {
        x = (round + j) % k;
        y = ((round - j) % k + k) % k;
    }
    *a = x < y ? x : y;
    *b = x < y ? y : x;
    return 0;
}
