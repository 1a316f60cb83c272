/* test_exe.c: which file a command runs and whether the dynamic loader takes LD_PRELOAD there
 * (capture/exe.h): PATH, "#!" interpreters and env(1) followed to the program; a set-user-ID or
 * set-group-ID copy of one (as root); a program that defines the driver API itself (this one). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "exe.h"

/* This program defines the driver API's first function, as a program with libcuda linked in
 * does. */
__attribute__((used, noinline)) int
cuInit(unsigned flags)
{
	return (int)flags;
}

static char dir[64];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_exe.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Writes an executable file name in dir with text, its path into path. */
static void
script(char *path, const char *name, const char *text)
{
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
}

/* The file that runs sh: PATH's. */
static void
path_of(const char *name, char *out)
{
	char *const argv[] = {(char *)name, NULL};
	exe_preload_check(argv, out, PATH_MAX);
}

START_TEST(test_path_and_scripts)
{
	char file[PATH_MAX], sh[PATH_MAX], a[PATH_MAX], b[PATH_MAX], text[PATH_MAX + 32];
	char *const none[] = {"cut-no-such-program", NULL};
	ck_assert_int_eq(exe_preload_check(none, file, sizeof(file)), EXE_PRELOADS);
	ck_assert_str_eq(file, "");
	path_of("sh", sh);
	ck_assert_ptr_nonnull(strstr(sh, "/sh"));
	ck_assert_int_eq(access(sh, X_OK), 0);
	/* a script: its interpreter is what runs */
	script(a, "plain", "#!/bin/sh\necho\n");
	char *const plain[] = {a, NULL};
	ck_assert_int_eq(exe_preload_check(plain, file, sizeof(file)), EXE_PRELOADS);
	ck_assert_str_eq(file, "/bin/sh");
	/* a script without "#!", set-user-ID: execvp runs it with sh, and its bits count for
	 * nothing */
	script(a, "nobang", "echo\n");
	if (geteuid() == 0) /* another user's: its bit would change the effective user */
		ck_assert_int_eq(chown(a, 65534, (gid_t)-1), 0);
	ck_assert_int_eq(chmod(a, 04755), 0);
	char *const nobang[] = {a, NULL};
	ck_assert_int_eq(exe_preload_check(nobang, file, sizeof(file)), EXE_PRELOADS);
	/* a script whose interpreter is a script */
	script(b, "inner", "#! /bin/sh -e\n");
	snprintf(text, sizeof(text), "#!%s\n", b);
	script(a, "outer", text);
	char *const outer[] = {a, NULL};
	exe_preload_check(outer, file, sizeof(file));
	ck_assert_str_eq(file, "/bin/sh");
	/* env(1), from "#!" with -S and an assignment, and as the command with options */
	if (access("/usr/bin/env", X_OK) == 0) {
		script(a, "viaenv", "#!/usr/bin/env -S A=1 sh -e\n");
		char *const viaenv[] = {a, NULL};
		exe_preload_check(viaenv, file, sizeof(file));
		ck_assert_str_eq(file, sh);
		char *const env[] = {"env", "-u", "X", "B=2", "sh", "-c", "true", NULL};
		exe_preload_check(env, file, sizeof(file));
		ck_assert_str_eq(file, sh);
		char *const bare[] = {"env", "-i", NULL}; /* it runs nothing: nothing to say */
		ck_assert_int_eq(exe_preload_check(bare, file, sizeof(file)), EXE_PRELOADS);
	}
}
END_TEST

START_TEST(test_driver_inside)
{
	char file[PATH_MAX], self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	char *const argv[] = {self, NULL};
	ck_assert_int_eq(exe_preload_check(argv, file, sizeof(file)), EXE_LIBCUDA_INSIDE);
	ck_assert_str_eq(file, self);
	ck_assert_str_eq(exe_why_word(EXE_LIBCUDA_INSIDE), "libcuda linked in");
	ck_assert_str_eq(exe_why_word(EXE_STATIC), "static");
	ck_assert_str_eq(exe_why_word(EXE_SETUID), "setuid");
	ck_assert_ptr_null(exe_why_word(EXE_PRELOADS));
}
END_TEST

/* A set-user-ID copy of sh that changes the effective user: secure execution. Owned by this
 * user it changes nothing (root running a set-user-ID root program keeps LD_PRELOAD). */
START_TEST(test_setid)
{
	char file[PATH_MAX], sh[PATH_MAX], copy[PATH_MAX], cmd[3 * PATH_MAX];
	struct stat st;
	path_of("sh", sh);
	snprintf(copy, sizeof(copy), "%s/sh", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", sh, copy);
	ck_assert_int_eq(system(cmd), 0);
	char *const argv[] = {copy, "-c", "true", NULL};
	ck_assert_int_eq(chmod(copy, 04755), 0);
	ck_assert_int_eq(stat(copy, &st), 0);
	if (!(st.st_mode & S_ISUID))
		return;
	ck_assert_int_eq(exe_preload_check(argv, file, sizeof(file)), EXE_PRELOADS);
	if (geteuid() != 0)
		return; /* giving it away needs root */
	ck_assert_int_eq(chown(copy, 65534, (gid_t)-1), 0);
	ck_assert_int_eq(chmod(copy, 04755), 0);
	/* where the mount is nosuid the bit counts for nothing */
	enum exe_why w = exe_preload_check(argv, file, sizeof(file));
	ck_assert(w == EXE_SETUID || w == EXE_PRELOADS);
	ck_assert_str_eq(file, copy);
	if (w == EXE_PRELOADS)
		return;
	ck_assert_int_eq(chown(copy, getuid(), 65534), 0);
	ck_assert_int_eq(chmod(copy, 02755), 0);
	ck_assert_int_eq(exe_preload_check(argv, file, sizeof(file)),
	                 getgid() == 65534 ? EXE_PRELOADS : EXE_SETGID);
	ck_assert_int_eq(chmod(copy, 02745), 0); /* no group execute: no set-group-ID */
	ck_assert_int_eq(exe_preload_check(argv, file, sizeof(file)), EXE_PRELOADS);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("exe");
	TCase *tc = tcase_create("exe");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_path_and_scripts);
	tcase_add_test(tc, test_driver_inside);
	tcase_add_test(tc, test_setid);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
