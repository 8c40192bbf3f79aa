/* railbench fabric check: the round-robin tournament schedule of host pairs (circle method), O(1) per pair. */
#include "fabcheck_int.h"

#include <errno.h>
#include <stdlib.h>

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

int rb_check_plan_quick_round(int n, int q, int quick)
{
    int rounds = rb_check_plan_rounds(n);
    if (quick <= 0 || q < 0 || q >= quick || q >= rounds)
        return -1;
    return quick >= rounds ? q : (int)((long long)q * rounds / quick);
}

int rb_check_plan_second(int n, const bool *suspect, const bool *met, int partners, struct rb_check_pairing *out,
                         int *rounds)
{
    *rounds = 0;
    if (n < 2 || partners < 1)
        return -EINVAL;
    int *need = calloc((size_t)n, sizeof *need), *used = calloc((size_t)n, sizeof *used), *good = malloc((size_t)n * sizeof *good);
    bool *seen = calloc((size_t)n * (size_t)n, sizeof *seen);
    int np = 0, ngood = 0, nsus = 0;
    if (!need || !used || !good || !seen) {
        np = -ENOMEM;
        goto out;
    }
    for (int h = 0; h < n; h++) {
        if (suspect[h]) {
            need[h] = partners;
            nsus++;
        } else {
            good[ngood++] = h;
        }
    }
    if (met)
        for (size_t i = 0; i < (size_t)n * (size_t)n; i++)
            seen[i] = met[i];
    /* Round by round, each suspect still in need takes the first good host free in this round it has not met. */
    for (int r = 0; nsus > 0 && ngood > 0; r++) {
        int made = 0;
        for (int g = 0; g < ngood; g++)
            used[good[g]] = 0;
        for (int s = 0; s < n; s++) {
            if (!need[s])
                continue;
            for (int g = 0; g < ngood; g++) {
                int x = good[(g + s) % ngood]; /* start at a different good host for each suspect */
                if (used[x] || seen[(size_t)s * (size_t)n + (size_t)x])
                    continue;
                used[x] = 1;
                seen[(size_t)s * (size_t)n + (size_t)x] = seen[(size_t)x * (size_t)n + (size_t)s] = true;
                out[np++] = (struct rb_check_pairing){.a = s < x ? s : x, .b = s < x ? x : s, .rail = -1, .round = r};
                need[s]--;
                made++;
                break;
            }
        }
        if (made == 0)
            break;
        *rounds = r + 1;
        nsus = 0;
        for (int s = 0; s < n; s++)
            nsus += need[s] > 0;
    }
out:
    free(need);
    free(used);
    free(good);
    free(seen);
    return np;
}
