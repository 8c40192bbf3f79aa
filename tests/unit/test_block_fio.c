/* Unit tests for fio job files and the fio JSON parser (block/fio.c), on fio outputs kept as fixtures. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../block/block_int.h"

#define FIX RB_FIXTURES_DIR "/fio/"

static struct rb_hist *hist(void)
{
    struct rb_hist *h = rb_hist_new();
    assert_non_null(h);
    return h;
}

/* |a - b| <= rel * b: for our histogram against fio's own bins (both log-linear, each under 1 %). */
static void assert_close(double a, double b, double rel)
{
    if (fabs(a - b) > rel * fabs(b))
        fail_msg("%.17g is not within %.2f %% of %.17g", a, 100 * rel, b);
}

/* Values below are those in the fixture files themselves (real fio 3.33 json+ runs on ext4, O_DIRECT). */
static void test_parse_real_randread(void **state)
{
    (void)state;
    struct rb_fio_result r;
    struct rb_hist *clat = hist(), *lat = hist();
    char err[256] = "";
    assert_int_equal(rb_fio_parse_file(FIX "real-randread-4k-qd4.json", &r, clat, lat, err, sizeof err), 0);
    assert_string_equal(r.version, "fio-3.33");
    assert_int_equal(r.njobs, 1);
    assert_int_equal(r.job_error, 0);
    assert_true(r.read.iops == 98838.323353);
    assert_true(r.read.bw_bytes_per_s == 404841772.0);
    assert_int_equal(r.read.io_bytes, 202825728);
    assert_int_equal(r.read.total_ios, 49518);
    assert_int_equal(r.read.runtime_ms, 501);
    assert_true(r.read.clat.have_pct);
    static const uint64_t want[RB_FIO_PCTS] = {34560, 37632, 49920, 76288, 514048};
    for (int i = 0; i < RB_FIO_PCTS; i++)
        assert_int_equal(r.read.clat.pct_ns[i], want[i]);
    assert_true(r.read.lat.have_pct);
    assert_int_equal(r.read.lat.pct_ns[2], 56576);
    assert_int_equal(r.read.clat.min_ns, 14958);
    assert_int_equal(r.read.clat.max_ns, 1057585);
    assert_true(r.read.clat.mean_ns == 33877.303688);
    /* Nothing written. */
    assert_int_equal(r.write.total_ios, 0);
    assert_true(r.write.iops == 0);
    assert_false(r.write.clat.have_pct);
    /* disk_util[] */
    assert_string_equal(r.disk, "vda");
    assert_true(r.disk_util_pct == 71.724138);
    /* json+ bins: every I/O lands in the histogram, and its percentiles agree with fio's within a bucket. */
    assert_int_equal(r.read.clat.bins, 49518);
    assert_int_equal(clat->count, 49518);
    assert_int_equal(lat->count, 49518);
    for (int i = 0; i < RB_FIO_PCTS; i++)
        assert_close((double)rb_hist_percentile(clat, rb_fio_pct[i]), (double)want[i], 0.01);
    assert_close((double)rb_hist_percentile(lat, 99), 56576, 0.01);
    rb_hist_free(clat);
    rb_hist_free(lat);
}

/* Mixed reads and writes: both directions parsed; their bins share the one histogram. */
static void test_parse_randrw(void **state)
{
    (void)state;
    struct rb_fio_result r;
    struct rb_hist *clat = hist();
    char err[256] = "";
    assert_int_equal(rb_fio_parse_file(FIX "real-randrw-4k-qd2-j2.json", &r, clat, NULL, err, sizeof err), 0);
    assert_true(r.read.iops == 39435.129741);
    assert_true(r.write.iops == 17139.720559);
    assert_int_equal(r.read.total_ios, 19757);
    assert_int_equal(r.write.total_ios, 8587);
    assert_int_equal(r.read.clat.pct_ns[2], 99840);
    assert_int_equal(r.write.clat.pct_ns[2], 142336);
    assert_int_equal(clat->count, 19757 + 8587);
    assert_true(r.disk_util_pct == 68.825911);
    rb_hist_free(clat);
}

/* Two jobs without group_reporting: totals add up; percentiles of two jobs cannot be combined, so none. */
static void test_parse_two_jobs_sum(void **state)
{
    (void)state;
    struct rb_fio_result r;
    struct rb_hist *clat = hist();
    char err[256] = "";
    assert_int_equal(rb_fio_parse_file(FIX "real-randread-2jobs.json", &r, clat, NULL, err, sizeof err), 0);
    assert_int_equal(r.njobs, 2);
    assert_true(fabs(r.read.iops - (33556.886228 + 33233.532934)) < 1e-6);
    assert_true(r.read.bw_bytes_per_s == 137449005.0 + 136124550.0);
    assert_int_equal(r.read.io_bytes, 68861952 + 68198400);
    assert_int_equal(r.read.total_ios, 16812 + 16650);
    assert_int_equal(r.read.clat.min_ns, 6202);
    assert_int_equal(r.read.clat.max_ns, 22961332);
    assert_false(r.read.clat.have_pct);
    assert_int_equal(clat->count, 16812 + 16650);
    rb_hist_free(clat);
}

/* fio writes notes such as "fio: terminating on signal 15" into --output before the JSON. */
static void test_parse_leading_notes(void **state)
{
    (void)state;
    struct rb_fio_result r;
    char err[256] = "";
    assert_int_equal(rb_fio_parse_file(FIX "leading-notes.json", &r, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(r.read.total_ios, 49518);
}

static void expect_error(const char *file, const char *needle)
{
    struct rb_fio_result r;
    struct rb_hist *clat = hist();
    char err[256] = "";
    char path[512];
    snprintf(path, sizeof path, FIX "%s", file);
    int rc = rb_fio_parse_file(path, &r, clat, NULL, err, sizeof err);
    assert_int_equal(rc, -EINVAL);
    if (!strstr(err, needle))
        fail_msg("%s: error \"%s\" does not contain \"%s\"", file, err, needle);
    rb_hist_free(clat);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_error("truncated.json", "malformed or truncated fio JSON (parse error at byte 7000 of 7000)");
    expect_error("bad-syntax.json", "malformed or truncated fio JSON");
    expect_error("not-json.json", "no JSON object in fio output");
    expect_error("missing-iops.json", "jobs[0].read.iops");
    char err[128];
    struct rb_fio_result r;
    assert_int_equal(rb_fio_parse("{\"jobs\":[]}", &r, NULL, NULL, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "no jobs[]"));
    assert_int_equal(rb_fio_parse("", &r, NULL, NULL, err, sizeof err), -EINVAL);
    assert_true(rb_fio_parse_file(FIX "does-not-exist.json", &r, NULL, NULL, err, sizeof err) == -ENOENT);
    assert_non_null(strstr(err, "does-not-exist.json"));
    /* A bin that is not "<ns>": count. */
    assert_int_equal(rb_fio_parse("{\"jobs\":[{\"read\":{\"iops\":1,\"bw_bytes\":1,\"io_bytes\":1,\"total_ios\":1,"
                                  "\"runtime\":1,\"clat_ns\":{\"min\":1,\"max\":1,\"mean\":1,\"bins\":{\"x\":1}},"
                                  "\"lat_ns\":{\"min\":1,\"max\":1,\"mean\":1}},\"write\":{}}]}",
                                  &r, NULL, NULL, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "jobs[0].read.clat_ns.bins"));
}

static void test_parse_job_error_and_no_util(void **state)
{
    (void)state;
    struct rb_fio_result r;
    char err[256] = "";
    assert_int_equal(rb_fio_parse_file(FIX "job-error.json", &r, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(r.job_error, 5);
    assert_int_equal(rb_fio_parse_file(FIX "no-disk-util.json", &r, NULL, NULL, err, sizeof err), 0);
    assert_true(r.disk_util_pct < 0);
    assert_string_equal(r.disk, "");
}

static struct rb_fio_job base_job(void)
{
    struct rb_fio_job j = {
        .name = "4k-randread-qd8-j2", .filename = "/mnt/nvme/railbench-block.0.data", .size_bytes = 1 << 30,
        .rw = "randread", .rwmix_read_pct = 70, .bs_bytes = 4096, .iodepth = 8, .numjobs = 2,
        .runtime_ns = 1500000000ull, .ramp_ns = 0, .engine = "libaio", .direct = 1,
    };
    return j;
}

static void test_job_text(void **state)
{
    (void)state;
    char buf[4096];
    struct rb_fio_job j = base_job();
    int n = rb_fio_job_text(&j, buf, sizeof buf);
    assert_true(n > 0 && (size_t)n == strlen(buf));
    static const char *const lines[] = {
        "\n[global]\n", "\nioengine=libaio\n", "\ndirect=1\n", "\nfilename=/mnt/nvme/railbench-block.0.data\n",
        "\nsize=1073741824\n", "\nrw=randread\n", "\nbs=4096\n", "\niodepth=8\n", "\nnumjobs=2\n",
        "\ngroup_reporting=1\n", "\ntime_based=1\n", "\nruntime=1500ms\n", "\nlat_percentiles=1\n",
        "\nclat_percentiles=1\n", "\npercentile_list=50:90:99:99.9:99.99\n", "\n[4k-randread-qd8-j2]\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        if (!strstr(buf, lines[i]))
            fail_msg("job text lacks %s", lines[i]);
    assert_null(strstr(buf, "rwmixread"));
    assert_null(strstr(buf, "ramp_time"));

    j.rw = "randrw";
    j.ramp_ns = 2000000000ull;
    j.size_bytes = 0;
    j.filename = "/dev/disk/by-path/pci-0000:00:1f.2-ata-1";
    assert_true(rb_fio_job_text(&j, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "\nrwmixread=70\n"));
    assert_non_null(strstr(buf, "\nramp_time=2000ms\n"));
    assert_null(strstr(buf, "size="));
    assert_non_null(strstr(buf, "\nfilename=/dev/disk/by-path/pci-0000\\:00\\:1f.2-ata-1\n"));

    assert_int_equal(rb_fio_job_text(&j, buf, 40), -ENOSPC);
}

/* Values fio would misread are refused instead of being written into a job file. */
static void test_job_rejects_unsafe(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "/a\nexec_prerun=rm -rf /", "/a;b", "/a#b", "/home/${USER}/x", " /a", "/a ",
                                      "/a\tb"};
    char buf[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_non_null(rb_fio_value_problem(bad[i]));
        struct rb_fio_job j = base_job();
        j.filename = bad[i];
        assert_int_equal(rb_fio_job_text(&j, buf, sizeof buf), -EINVAL);
    }
    assert_null(rb_fio_value_problem("/mnt/a b/c:d-e_f.g"));
    struct rb_fio_job j = base_job();
    j.engine = "libaio\nexec_postrun=x";
    assert_int_equal(rb_fio_job_text(&j, buf, sizeof buf), -EINVAL);
    j = base_job();
    j.name = "a]b";
    assert_int_equal(rb_fio_job_text(&j, buf, sizeof buf), -EINVAL);
}

/* Every key railbench writes into a job file is one a --fio-opt item may not set; others go in after them. */
static void test_fio_opt(void **state)
{
    (void)state;
    char buf[4096], item[160];
    struct rb_fio_job j = base_job();
    j.rw = "randrw";
    j.ramp_ns = 1000000000ull;
    assert_true(rb_fio_job_text(&j, buf, sizeof buf) > 0);
    int keys = 0;
    for (char *line = strstr(buf, "[global]\n") + 9; *line && *line != '\n'; line = strchr(line, '\n') + 1) {
        size_t k = strcspn(line, "=\n");
        snprintf(item, sizeof item, "%.*s=1", (int)k, line);
        if (rb_fio_opt_check(item, NULL, 0) != -EEXIST)
            fail_msg("%s: railbench writes it, yet --fio-opt may set it", item);
        keys++;
    }
    assert_int_equal(keys, 16);
    assert_int_equal(rb_fio_opt_check("output-format=json", NULL, 0), -EEXIST);
    char err[300];
    assert_int_equal(rb_fio_opt_check("bs=8k", err, sizeof err), -EEXIST);
    assert_string_equal(err, "'bs=8k': railbench sets bs from --bs; use that option");
    static const char *const bad[] = {"", "=1", "a[b", "x]", "rate_iops=", "a=1\nb=2", "a=$x", "a=1;b", "Bs=1", "a b=1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (rb_fio_opt_check(bad[i], err, sizeof err) != -EINVAL || strchr(err, '\n'))
            fail_msg("'%s' passed as a --fio-opt item, or its message has a line break", bad[i]);

    const char *extra[] = {"hipri", "cpus_allowed=0-1"};
    j.extra = extra;
    j.nextra = 2;
    assert_true(rb_fio_job_text(&j, buf, sizeof buf) > 0);
    const char *opts = strstr(buf, "\nhipri\ncpus_allowed=0-1\n\n[");
    assert_non_null(opts);
    assert_true(opts > strstr(buf, "percentile_list=")); /* after railbench's keys, in [global] */
    extra[1] = "numjobs=4";
    assert_int_equal(rb_fio_job_text(&j, buf, sizeof buf), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_real_randread),
        cmocka_unit_test(test_parse_randrw),
        cmocka_unit_test(test_parse_two_jobs_sum),
        cmocka_unit_test(test_parse_leading_notes),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_job_error_and_no_util),
        cmocka_unit_test(test_job_text),
        cmocka_unit_test(test_job_rejects_unsafe),
        cmocka_unit_test(test_fio_opt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
