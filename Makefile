# The blog: pg_blog (PostgreSQL extension) + mod_blog (Apache module).
# `./blog run` / `./blog check` install missing Debian packages first, then
# call the targets below; once the packages are there, make alone works.

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: all build deps run stop status check unit installcheck e2e faults \
        soak bench install install-ext install-module clean

all: build

deps:
	sh scripts/deps.sh

build:
	$(MAKE) -C mod_blog
	$(MAKE) -C pg_blog_ext

# The private stack needs the extension where PostgreSQL finds it.
install-ext: build
	$(SUDO) $(MAKE) -C pg_blog_ext install

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

# Every test; the stack this starts is stopped at the end, pass or fail.
check: build install-ext
	scripts/check.sh

# The whole fault suite, long cases included (a few minutes), one table of
# case, action, figure, PASS/FAIL; `make check` runs only the fast cases.
# FAULTS=case... runs some (scripts/faults.sh --list names them).
faults: build install-ext
	scripts/faults.sh $(FAULTS)

# At least 1 000 000 mixed requests; child RSS, fds and PostgreSQL
# connections before, during and after must stay flat.
soak: build install-ext
	scripts/faults.sh soak

installcheck:
	$(MAKE) -C pg_blog_ext installcheck

bench: build install-ext
	bench/run.sh

# A system install: Debian's Apache and PostgreSQL 15 (see README).
install: install-module install-ext

install-module: build
	$(SUDO) $(MAKE) -C mod_blog install
	$(SUDO) install -m 644 conf/blog.load conf/blog.conf /etc/apache2/mods-available/
	$(SUDO) install -d /usr/share/mod_blog/templates
	$(SUDO) install -m 644 templates/*.html /usr/share/mod_blog/templates/

clean:
	$(MAKE) -C mod_blog clean
	$(MAKE) -C pg_blog_ext clean
	$(MAKE) -C tests/unit clean
