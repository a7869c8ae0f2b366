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

KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) \
	$(if $(ARCH),ARCH=$(ARCH)) $(if $(CROSS_COMPILE),CROSS_COMPILE=$(CROSS_COMPILE))

.PHONY: all modules module tool selftests clean modules_clean modules_install install uninstall \
	check demo setup bench

all: modules tool

# Warnings fail our builds (W=1, -Werror); dkms.conf passes W= WERROR=0 so a
# user's newer compiler cannot keep the module from building.
modules module:
	$(KMAKE) $(if $(filter 1,$(WERROR)),KCFLAGS=-Werror) modules

modules_install:
	$(KMAKE) modules_install

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

demo:
	scripts/demo

bench:
	scripts/bench
