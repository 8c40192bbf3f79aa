/* The one outlier rule of railbench: median and MAD of a fleet, and who is far below (or above) it. */
#include "railbench/outlier.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n), n >= 1, sorting v in place. */
static double median_sorting(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int rb_outlier_fleet(const double *v, size_t n, struct rb_outlier_fleet *fleet)
{
    *fleet = (struct rb_outlier_fleet){.n = 0, .median = NAN, .mad = NAN};
    double *w = malloc((n ? n : 1) * sizeof *w);
    if (!w)
        return -ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            w[m++] = v[i];
    if (m == 0) {
        free(w);
        return -EINVAL;
    }
    double med = median_sorting(w, m);
    for (size_t i = 0; i < m; i++)
        w[i] = fabs(w[i] - med);
    fleet->n = m;
    fleet->median = med;
    fleet->mad = median_sorting(w, m);
    free(w);
    return 0;
}

double rb_outlier_z(const struct rb_outlier_fleet *fleet, double x)
{
    double d = x - fleet->median;
    if (d == 0)
        return 0;
    if (!(fleet->mad > 0))
        return d > 0 ? INFINITY : -INFINITY;
    return d / (1.4826 * fleet->mad);
}

double rb_outlier_ratio(const struct rb_outlier_fleet *fleet, double x)
{
    if (!(fleet->median != 0) || isnan(fleet->median))
        return NAN;
    return x / fleet->median;
}

bool rb_outlier_is(const struct rb_outlier_fleet *fleet, double x, bool higher_is_better, double threshold,
                   double min_z)
{
    if (fleet->n < 2 || isnan(x) || isnan(fleet->median))
        return false;
    bool far = higher_is_better ? x < threshold * fleet->median : x * threshold > fleet->median;
    if (!far)
        return false;
    return min_z <= 0 || fabs(rb_outlier_z(fleet, x)) >= min_z;
}
