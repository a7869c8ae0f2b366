# SPDX-License-Identifier: GPL-2.0
#
# cycsample top-level Makefile.
#
#   make                      module for KDIR + cycread for this machine
#   make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- KDIR=...   cross build
#   make demo                 profile the demo workload in the arm64 QEMU guest
#   make check                every test: host units, module builds, guests
#                             (CHECK_KERNELS="arm64-6.1" for a subset; see scripts/check -h)
#   make setup                install the Debian packages the bench needs (root)
#   make install / uninstall  module, cycread, man page, udev rule (DESTDIR, PREFIX)
#   make lint                 the static-analysis gates alone (scripts/lint)
#
# dkms runs "make KDIR=<headers> modules" and appends KERNELRELEASE=...; the
# kbuild half lives in ./Kbuild, so no KERNELRELEASE guard is needed here.

KDIR		?= /lib/modules/$(shell uname -r)/build
ARCH		?=
CROSS_COMPILE	?=
DESTDIR		?=
PREFIX		?= /usr/local
W		?= 1
WERROR		?= 1
MODDIR		?= updates
BINDIR		 = $(PREFIX)/bin
MANDIR		 = $(PREFIX)/share/man/man1
UDEVDIR		?= /etc/udev/rules.d
KRELEASE	 = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)

KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) \
	$(if $(ARCH),ARCH=$(ARCH)) $(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE))

.PHONY: all modules module tool selftests clean modules_clean modules_install install uninstall \
	check check-debug demo setup bench lint format

all: modules tool

# Warnings fail our builds (W=1, -Werror); dkms.conf passes W= WERROR=0 so a
# user's newer compiler cannot keep the module from building.
modules module:
	$(KMAKE) $(if $(filter 1,$(WERROR)),KCFLAGS=-Werror) modules

modules_install:
	$(KMAKE) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=$(MODDIR) modules_install

# The module under /lib/modules/<release>/updates/, cycread, its man page and
# the udev rule; DESTDIR stages them, PREFIX moves the userspace parts.
install: modules tool modules_install
	$(MAKE) -C tool install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	install -D -m 0644 Documentation/cycread.1 $(DESTDIR)$(MANDIR)/cycread.1
	install -D -m 0644 udev/60-cycsample.rules $(DESTDIR)$(UDEVDIR)/60-cycsample.rules

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KRELEASE)/$(MODDIR)/module/cycsample.ko* \
		$(DESTDIR)$(BINDIR)/cycread $(DESTDIR)$(MANDIR)/cycread.1 \
		$(DESTDIR)$(UDEVDIR)/60-cycsample.rules
	-rmdir $(DESTDIR)/lib/modules/$(KRELEASE)/$(MODDIR)/module 2>/dev/null
	$(if $(DESTDIR),,-depmod -a $(KRELEASE))

tool:
	$(MAKE) -C tool ARCH=$(ARCH) CROSS_COMPILE=$(CROSS_COMPILE)

selftests:
	$(MAKE) -C selftests ARCH=$(ARCH) CROSS_COMPILE=$(CROSS_COMPILE)

modules_clean:
	$(KMAKE) clean

# The selftests Makefile insists on KSFT_DIR, which cleaning does not need.
clean: modules_clean
	$(MAKE) -C tool clean
	$(MAKE) -C selftests KSFT_DIR=unused clean

setup:
	scripts/setup-host

check:
	scripts/check

# The arm64 debug kernel (KASAN, lockdep, kmemleak, UBSAN, fault injection):
# run by hand, not by CI; see Documentation/testing.rst.
check-debug:
	scripts/check-debug

demo:
	scripts/demo

bench:
	scripts/bench -j 2

lint:
	scripts/lint

format:
	clang-format -i $$(git ls-files -- module tool selftests demo | grep '\.[ch]$$')
