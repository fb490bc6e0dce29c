/*
 * The guards against hostile inputs, at the API: the memory budget (sizes,
 * the refusal line, a real-size generated case under the default of a 24 GB
 * machine), regular-file opens that never wait on a FIFO, and report paths
 * written through symbolic links into folders made on the way.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mtp/generate.h"
#include "mtp/membudget.h"
#include "mtp/textio.h"
#include "test_util.h"

Test(inputs, mem_sizes_parse_and_refuse_nonsense)
{
	uint64_t b;

	cr_assert(mtp_mem_parse("40G", &b) && b == 40ull << 30);
	cr_assert(mtp_mem_parse("512MiB", &b) && b == 512ull << 20);
	cr_assert(mtp_mem_parse("1.5T", &b) && b == 3ull << 39);
	cr_assert(mtp_mem_parse("65536", &b) && b == 65536);
	cr_assert(!mtp_mem_parse("-1G", &b));
	cr_assert(!mtp_mem_parse("lots", &b));
	cr_assert(!mtp_mem_parse("10Q", &b));
	cr_assert(!mtp_mem_parse("0", &b));
	cr_assert(!mtp_mem_parse("1e30", &b));
}

Test(inputs, mem_check_names_need_and_budget)
{
	char why[256];

	cr_assert_eq(mtp_mem_check(10, 10, why, sizeof(why)), MTP_OK);
	cr_assert_eq(mtp_mem_check(10, 0, why, sizeof(why)), MTP_OK);
	cr_assert_eq(mtp_mem_check(3ull << 30, 1ull << 30, why, sizeof(why)),
		     MTP_ERR_LIMIT);
	cr_assert(strstr(why, "needs 3.0 GiB (3221225472 bytes)"), "%s", why);
	cr_assert(strstr(why, "budget of 1.0 GiB") &&
			  strstr(why, "--mem-limit"),
		  "%s", why);
	cr_assert(mtp_mem_default_limit() > 0);
}

/* A V3 step at the real vocabulary (V = 129280, H = 7168) fits the default
 * budget of a 24 GB machine (12 GB); the count grows with the shapes. */
Test(inputs, real_size_generated_case_fits_a_24gb_machine)
{
	struct mtp_gen_spec s;
	uint64_t small, big;

	mtp_gen_spec_init(&s, mtp_op_find("lm_head"));
	s.t = 4;
	s.h = 7168;
	s.v = 129280;
	big = mtp_gen_spec_bytes(&s);
	s.v = 1024;
	small = mtp_gen_spec_bytes(&s);
	cr_assert(big > (uint64_t)129280 * 7168 * 2, "%llu",
		  (unsigned long long)big);
	cr_assert(big < 12ull << 30 && small < big);
}

Test(inputs, regular_open_refuses_fifo_and_folder_at_once)
{
	char p[128], why[128];

	tu_tmpname(p, sizeof(p), "fifo");
	cr_assert_eq(mkfifo(p, 0600), 0);
	cr_assert_eq(mtp_open_regular(p, why, sizeof(why)), -1);
	cr_assert(strstr(why, "FIFO"), "%s", why);
	cr_assert_eq(mtp_open_regular("/tmp", why, sizeof(why)), -1);
	cr_assert(strstr(why, "folder"), "%s", why);
	cr_assert_null(mtp_read_text(p));
	remove(p);
}

static void body(FILE *f, const void *arg)
{
	fputs(arg, f);
}

Test(inputs, reports_go_through_links_into_new_folders)
{
	char dir[128], link[256], target[256], deep[256], err[512];
	struct stat sb;

	tu_tmpname(dir, sizeof(dir), "out");
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(target, sizeof(target), "%s/real.json", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	cr_assert_eq(symlink("real.json", link), 0);
	cr_assert_eq(mtp_write_atomic(link, body, "x", err, sizeof(err)),
		     MTP_OK, "%s", err);
	cr_assert(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
	cr_assert(stat(target, &sb) == 0 && sb.st_size == 1);
	snprintf(deep, sizeof(deep), "%s/a/b/r.html", dir);
	cr_assert_eq(mtp_write_atomic(deep, body, "y", err, sizeof(err)),
		     MTP_OK, "%s", err);
	snprintf(deep, sizeof(deep), "%s/real.json/x.html", dir);
	cr_assert_neq(mtp_write_atomic(deep, body, "z", err, sizeof(err)),
		      MTP_OK);
	cr_assert(strstr(err, "not a folder"), "%s", err);
}
