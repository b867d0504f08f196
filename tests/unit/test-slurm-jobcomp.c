/* test-slurm-jobcomp.c - a task's end from the jobcomp/filetxt file that
 * tune --slurm and run --slurm follow (lib/tune/slurm.c): the last record
 * of the task counts, and only when its state is final. `scontrol requeue`
 * (as after a preemption) writes a record with JobState=PENDING: the task
 * has not ended then, it runs again (found by tests/cli/slurm.sh's requeue
 * case on a loaded machine: the rerun was taken as the launch's end). The
 * records are written here, in the shape the test cluster's slurmctld
 * writes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vf_test.h"
#include "vramfit/tune/slurm.h"

static void record(FILE *f, long job, long task, const char *state, const char *exit_code)
{
	fprintf(f,
		"JobId=%ld UserId=u(1) GroupId=g(1) Name=vramfit-tune JobState=%s Partition=debug "
		"TimeLimit=UNLIMITED StartTime=2026-12-02T00:15:14 EndTime=2026-12-02T00:15:21 NodeList=node1 "
		"NodeCnt=1 ProcCnt=1 ArrayJobId=%ld ArrayTaskId=%ld DerivedExitCode=0:0 ExitCode=%s \n",
		job + task, state, job, task, exit_code);
}

static void test_requeued(void)
{
	char path[] = "/tmp/vf-jobcomp.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	record(f, 1, 0, "FAILED", "1:0");
	record(f, 2, 0, "PENDING", "0:0"); /* scontrol requeue while it ran */
	record(f, 4, 0, "CANCELLED", "0:15");
	fclose(f);
	struct vf_slurm_job j;
	CHECK(vf_slurm_jobcomp_final(path, 1, 0, &j));
	CHECK_STR(j.state, "FAILED");
	CHECK_STR(j.exit_code, "1:0");
	/* requeued: not ended, whatever squeue said in between */
	CHECK(!vf_slurm_jobcomp_final(path, 2, 0, &j));
	CHECK(vf_slurm_jobcomp_final(path, 4, 0, &j));
	CHECK_STR(j.state, "CANCELLED");
	CHECK(!vf_slurm_jobcomp_final(path, 2, 1, &j)); /* no record of that task */
	CHECK(!vf_slurm_jobcomp_final(path, 3, 0, &j));
	/* the rerun's own record: now it ended, and the last record wins */
	f = fopen(path, "a");
	record(f, 2, 0, "COMPLETED", "0:0");
	fclose(f);
	CHECK(vf_slurm_jobcomp_final(path, 2, 0, &j));
	CHECK_STR(j.state, "COMPLETED");
	CHECK(j.array_job_id == 2 && j.array_task_id == 0);
	unlink(path);
	CHECK(!vf_slurm_jobcomp_final(path, 1, 0, &j)); /* no file */
}

int main(void)
{
	RUN(test_requeued);
	return vf_test_done();
}
