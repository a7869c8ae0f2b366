// SPDX-License-Identifier: GPL-2.0
/*
 * sigchld-ignored CMD [ARGS] - run CMD with SIGCHLD ignored, a disposition
 * exec keeps (children are then reaped by the kernel).  A shell cannot set
 * it: "trap '' CHLD" in busybox sh or dash leaves SIGCHLD handled, which
 * exec resets to the default.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sigchld-ignored CMD [ARGS]\n");
		return 2;
	}
	signal(SIGCHLD, SIG_IGN);
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
