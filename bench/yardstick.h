/* yardstick.h - the benches' common yardstick: the wall time of
 * `python3 -c pass` (a process every machine here can start), timed next to
 * each measurement so a figure can be printed as a ratio that means the same
 * on a busy and an idle machine. Header-only (bench programs are one file
 * each). */
#ifndef VRAMFIT_BENCH_YARDSTICK_H
#define VRAMFIT_BENCH_YARDSTICK_H

#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double yardstick_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Milliseconds `python3 -c pass` took, or -1 when it could not run. */
static double yardstick_ms(void)
{
	char *argv[] = {"python3", "-c", "pass", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /* O_WRONLY */, 0);
	double t = yardstick_now();
	pid_t pid;
	int rc = posix_spawnp(&pid, "python3", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return (yardstick_now() - t) * 1e3;
}

#endif
