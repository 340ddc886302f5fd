# SPDX-License-Identifier: Apache-2.0
# The blog: pg_blog (PostgreSQL extension) + mod_blog (Apache module).
# `./blog run` / `./blog check` install missing Debian packages first, then
# call the targets below; once the packages are there, make alone works.

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

# The extension is built for the PostgreSQL the stack runs (scripts/env.sh,
# scripts/pgmajor.sh), not for whichever pg_config comes first in PATH.
ifndef PG_CONFIG
PG_MAJOR := $(shell sh scripts/pgmajor.sh 2>/dev/null)
PG_CONFIG := $(if $(BLOG_PG_BIN),$(BLOG_PG_BIN)/pg_config,$(if $(PG_MAJOR),/usr/lib/postgresql/$(PG_MAJOR)/bin/pg_config,pg_config))
endif
export PG_CONFIG

.PHONY: all build deps run stop status check unit coverage installcheck e2e faults \
        cluster-test soak bench freshness sizing install install-ext install-module uninstall installcheck-system \
        deb system-test system-test-source pg-versions quickstart-test version clean

all: build

deps:
	sh scripts/deps.sh

build:
	$(MAKE) -C mod_blog
	$(MAKE) -C pg_blog_ext

# The private stack needs the extension where PostgreSQL finds it.
install-ext: build
	$(SUDO) $(MAKE) -C pg_blog_ext install PG_CONFIG=$(PG_CONFIG) DESTDIR=$(DESTDIR)

run: build install-ext
	scripts/stack.sh start
	@echo
	@echo "The blog serves on http://127.0.0.1:$${BLOG_HTTP_PORT:-8080}/"
	@echo "Stop it with: make stop"

stop:
	scripts/stack.sh stop

status:
	scripts/stack.sh status

unit:
	$(MAKE) -C tests/unit check

# gcov line coverage per .c file of mod_blog and pg_blog: the unit tests,
# then builds of both with --coverage in a stack of their own that the
# suites drive; fails when a file is under 80 % (a few minutes; takes no
# lock itself: run it under the load lock on a shared machine).
coverage:
	scripts/coverage.sh

# Every test; the stack this starts is stopped at the end, pass or fail.
check: build install-ext
	scripts/check.sh

# The scale-out on hosts of its own (network namespaces, as root): a
# primary, two standbys, Redis, two web nodes, PgBouncer, a client host.
cluster-test: build install-ext
	$(SUDO) tests/cluster/run.sh

# The whole fault suite, long cases included (a few minutes), one table of
# case, action, figure, PASS/FAIL; `make check` runs only the fast cases.
# FAULTS=case... runs some (scripts/faults.sh --list names them).
faults: deps build install-ext
	scripts/faults.sh $(FAULTS)

# At least 1 000 000 mixed requests; child RSS, fds and PostgreSQL
# connections before, during and after must stay flat.
soak: deps build install-ext
	scripts/faults.sh soak

installcheck:
	$(MAKE) -C pg_blog_ext installcheck

bench: deps build install-ext
	bench/run.sh

# Writes under load on the cached routes: commit -> first fresh cached
# answer (p50/p99/max), no stale answer after it, throughput with 10
# writes/s against read-only (bench/freshness.py; takes the load lock).
freshness: build install-ext
	scripts/stack.sh start
	bash -c ". scripts/env.sh && exec python3 bench/freshness.py"

# docs/OPERATIONS.md's sizing figures: memory idle and under load beside a
# stock Apache, req/s and slow clients taken, per ThreadsPerChild
# (bench/sizing.py; SIZING_THREADS; takes the load lock; a few minutes).
sizing: build install-ext
	scripts/stack.sh start
	bash -c ". scripts/env.sh && exec python3 bench/sizing.py"

# A system install: Debian's Apache and PostgreSQL (see docs/INSTALL.md).
# DESTDIR stages both into a folder (tests/system/run.sh checks that
# uninstall removes every file install puts there).
MODS_AVAILABLE = $(DESTDIR)/etc/apache2/mods-available
CONF_AVAILABLE = $(DESTDIR)/etc/apache2/conf-available
SHARE_DIR = $(DESTDIR)/usr/share/mod_blog
MAN7_DIR = $(DESTDIR)/usr/share/man/man7
# the man page names the extension's package of the PostgreSQL built for
PG_CONFIG_MAJOR = $(shell $(PG_CONFIG) --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')

install: install-module install-ext

install-module: build
	$(SUDO) $(MAKE) -C mod_blog install DESTDIR=$(DESTDIR)
	$(SUDO) install -d $(MODS_AVAILABLE) $(CONF_AVAILABLE) $(SHARE_DIR)/templates $(MAN7_DIR)
	$(SUDO) install -m 644 conf/blog.load conf/blog.conf $(MODS_AVAILABLE)/
	$(SUDO) install -m 644 conf/blog-mpm.conf $(CONF_AVAILABLE)/
	$(SUDO) install -m 644 templates/*.html $(SHARE_DIR)/templates/
	$(SUDO) install -m 644 sql/setup.sql $(SHARE_DIR)/
	sh scripts/man-page.sh $(PG_CONFIG_MAJOR) | \
	    $(SUDO) sh -c 'cat >$(MAN7_DIR)/mod_blog.7 && chmod 644 $(MAN7_DIR)/mod_blog.7'

# Undoes `make install`.  The module is disabled first (a dangling link in
# mods-enabled would stop Apache), and a2dismod's record of it purged, as
# the package's purge does: a record of an admin's a2dismod would keep a
# later package install from enabling it.  Databases that use the
# extension keep it in their catalogue: drop them first (docs/INSTALL.md).
uninstall:
	if [ -z "$(DESTDIR)" ] && command -v a2dismod >/dev/null; then \
	    $(SUDO) a2dismod -q -p blog >/dev/null 2>&1 || true; \
	    $(SUDO) a2disconf -q -p blog-mpm >/dev/null 2>&1 || true; fi
	$(SUDO) rm -f $(MODS_AVAILABLE)/blog.load $(MODS_AVAILABLE)/blog.conf \
	    $(CONF_AVAILABLE)/blog-mpm.conf $(MAN7_DIR)/mod_blog.7
	$(SUDO) rm -rf $(SHARE_DIR)
	$(SUDO) $(MAKE) -C mod_blog uninstall DESTDIR=$(DESTDIR)
	$(SUDO) $(MAKE) -C pg_blog_ext uninstall PG_CONFIG=$(PG_CONFIG) DESTDIR=$(DESTDIR)
	@echo "make uninstall removed the files; restart Apache (service apache2 restart)." \
	    "It leaves the database blog, the roles blog_web, pgblog_web and pgblog_writer," \
	    "the blog lines of pg_hba.conf and pg_ident.conf and the virtual host's BlogMount" \
	    "(docs/INSTALL.md, 'Removing it', removes them)"

# pg_regress against the system cluster (as its superuser postgres when run
# as root), without the private stack; drops its database afterwards.
installcheck-system:
	scripts/installcheck-system.sh

# The two Debian packages, built from a copy of the tree (dpkg-buildpackage
# writes next to the source folder), then checked by lintian.
DEB_DIR = build/deb
deb:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	tar --exclude=./.git --exclude=./var --exclude=./build --exclude=./results \
	    -cf - . | tar -C $(DEB_DIR)/src -xf -
	cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b
	rm -rf $(DEB_DIR)/src
	@# lintian warns when run as root: as nobody, from a copy of the packages
	@# in a folder nobody can enter (it cannot enter a clone in /root)
	changes=$$(ls $(DEB_DIR)/*.changes); \
	if [ "$$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then \
	    tmp=$$(mktemp -d) && chmod 755 "$$tmp" && \
	    cp $(DEB_DIR)/*.changes $(DEB_DIR)/*.buildinfo $(DEB_DIR)/*.deb "$$tmp"/ && \
	    chmod 644 "$$tmp"/* && \
	    (cd "$$tmp" && runuser -u nobody -- lintian --info --display-info --pedantic --fail-on error,warning \
	        "$$(basename "$$changes")"); \
	    rc=$$?; rm -rf "$$tmp"; [ $$rc -eq 0 ]; \
	else lintian --info --display-info --pedantic --fail-on error,warning "$$changes"; fi
	@ls -l $(DEB_DIR)/*.deb

# docs/INSTALL.md as written in fresh minbase systems of Debian 12 and 13
# (SYSTEST_SUITES): the packages built there and their autopkgtest, both
# ways of installing, removal, install again, the previous release's
# packages upgraded under load (SYSTEST_PARTS; about 47 min per release).
SYSTEST_SUITES = bookworm trixie
SYSTEST_PARTS = build packages source upgrade
system-test:
	tests/system/run.sh --suites "$(SYSTEST_SUITES)" --parts "$(SYSTEST_PARTS)"

# Only the source way (`./blog install`, `make uninstall`).
system-test-source:
	tests/system/run.sh --suites "$(SYSTEST_SUITES)" --parts source

# The README's quick start (./blog run, make stop, ./blog check) as written,
# in a fresh minbase chroot of QUICKSTART_SUITE (trixie: Debian 13), in
# namespaces of its own (tests/system/quickstart.sh; a quarter of an hour).
QUICKSTART_SUITE = trixie
quickstart-test:
	tests/system/quickstart.sh $(QUICKSTART_SUITE)

# pg_blog built with -Wall -Wextra -Werror and its pg_regress suite on a
# cluster of each locale (SQL_ASCII, C, C.UTF-8, tr_TR.UTF-8, de_DE.UTF-8,
# ICU tr and und) of each PostgreSQL Debian ships, from a copy of
# pg_blog_ext/ alone, each in a minbase chroot of its distribution
# (bookworm 15, trixie 17, sid 18), kept in /var/cache/blog-pgchroots (the
# first run makes them).  PG_SUITES=... picks some; ./blog check runs
# tests/pgversions/run.sh --fast (each locale on one major).
pg-versions:
	tests/pgversions/run.sh $(PG_SUITES)

# The version, stated once in debian/changelog, written into pg_blog.control
# and the man page (tests/tree/versions.sh checks that they agree).
version:
	scripts/version.sh --write

clean:
	$(MAKE) -C mod_blog clean
	$(MAKE) -C pg_blog_ext clean
	$(MAKE) -C tests/unit clean
