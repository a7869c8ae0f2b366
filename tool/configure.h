/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CONFIGURE as a negotiation: cycread asks for everything it can use, and a
 * module may refuse parts of it.  An older module refuses flags it does not
 * know (-EINVAL), a kernel without kprobes refuses MMAP records
 * (-EOPNOTSUPP), an unprivileged session or a locked-down kernel refuses
 * kernel callchains (-EACCES, -EPERM), a user's locked-memory budget
 * refuses perf's ring size (-EPERM).  Each refusal has one way to do
 * without; several may stand between cycread and a session, one behind
 * the other, in whatever order the module checks them.
 */
#ifndef CYCREAD_CONFIGURE_H
#define CYCREAD_CONFIGURE_H

#include <stdbool.h>

#include <linux/cycsample.h>

#include "util.h"

/* One CONFIGURE: 0 or a negative errno.  dev_configure() for the device. */
typedef int (*cs_configure_fn)(void *dev, const struct cycsample_config *cfg);

struct cs_config_ctx {
	const char *device; /* named in the messages */
	const char *what; /* the command started, for the exec warning */
	bool ring_given; /* the user chose the ring size (-m): kept */
};

/* The ring's size the module works out for @ring_pages, and cycread's watermark */
u32 config_wakeup_bytes(u32 ring_pages);

/*
 * Configure with @cfg, and after each refusal retry without the first part
 * that can answer it, each part given up at most once.  @cfg ends as the
 * configuration the module took (or last refused).  Says what was given up
 * (pr_debug, or pr_warn where the profile loses something the user sees)
 * once the module has taken it.
 *
 * Return: 0, or the module's last error.
 */
int config_negotiate(cs_configure_fn configure, void *dev, struct cycsample_config *cfg,
		     const struct cs_config_ctx *ctx);

#endif /* CYCREAD_CONFIGURE_H */
