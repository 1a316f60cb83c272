/* check_main.h: the main() every Check suite here shares: run one suite, exit 1 on failure. */
#ifndef CHECK_MAIN_H
#define CHECK_MAIN_H

#include <check.h>

static int
run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
