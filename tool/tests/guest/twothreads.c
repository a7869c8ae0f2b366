// SPDX-License-Identifier: GPL-2.0
/*
 * twothreads - a process of two threads that sleep until killed; prints the
 * second thread's id.  The end-to-end test gives that id to -p, which wants
 * a process, and checks that cycread names the process the thread is of.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *second(void *arg)
{
	(void)arg;
	printf("%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, second, NULL))
		return 1;
	for (;;)
		pause();
}
