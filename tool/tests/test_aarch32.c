// SPDX-License-Identifier: GPL-2.0
/*
 * test_aarch32 - 32-bit ARM ELF objects, as AArch32 tasks on arm64 map
 * them: an armhf shared object compiled now with the cross compiler (skipped
 * without it), read through the symbolizer.  ELF marks a Thumb function by
 * bit 0 of its symbol value; the function starts one byte below, where an
 * interrupted pc points, and a return address into it has bit 0 set.
 */
#include <elf.h>

#include "fixtures.h"
#include "tap.h"
#include "../elfsym.h"

/* st_value of @name in the fixture, as readelf prints it (nm clears bit 0). */
static u64 sym_value(const char *name)
{
	char *out = fx_out("readelf -sW fx_a32.so | awk '$8 == \"%s\" { print $2; exit }'", name);
	u64 v = 0;

	if (out)
		v = strtoull(out, NULL, 16);
	free(out);
	return v;
}

static void expect(struct dso *d, u64 addr, const char *want, const char *what)
{
	struct dso_sym *s = dso_find(d, addr);

	is_str(s ? dso_sym_name(d, s) : "(none)", want, what);
}

int main(void)
{
	const char *why = NULL;
	u64 thumb, arm;
	struct dso *d;
	char path[300];

	if (fx_sh("command -v arm-linux-gnueabihf-gcc >/dev/null")) {
		tap_skip("no arm-linux-gnueabihf-gcc (scripts/setup-host installs it)");
		return tap_done();
	}
	ok(!fx_sh("arm-linux-gnueabihf-gcc -O2 -fPIC -shared %s/fixtures/fx_a32.c -o fx_a32.so",
		  TEST_SRCDIR),
	   "armhf fixture built");
	thumb = sym_value("fx_thumb");
	arm = sym_value("fx_arm");
	ok(thumb & 1, "the Thumb function's symbol value has bit 0 set (%#llx)",
	   (unsigned long long)thumb);
	ok(arm && !(arm & 3), "the ARM function's is word-aligned (%#llx)",
	   (unsigned long long)arm);
	snprintf(path, sizeof(path), "%s/fx_a32.so", fx_tmpdir());
	d = dso_open_path(path, &why);
	ok(d, "a 32-bit ARM ELF file opens (%s)", why ? why : "ok");
	if (!d)
		return tap_done();
	ok(d->e_machine == EM_ARM, "its machine is EM_ARM");
	dso_load_syms(d, NULL);
	expect(d, thumb & ~1ULL, "fx_thumb", "pc at the Thumb function's first instruction");
	expect(d, (thumb & ~1ULL) + 2, "fx_thumb", "pc inside the Thumb function");
	expect(d, arm, "fx_arm", "pc at the ARM function's first instruction");
	expect(d, arm + 4, "fx_arm", "pc inside the ARM function");
	dso_free(d);
	return tap_done();
}
