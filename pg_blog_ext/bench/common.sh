# SPDX-License-Identifier: Apache-2.0
# What run.sh and callgrind.sh share (sourced): pgbench's settings, and how
# a run's pages/s and the median of several runs are read.
CLIENTS=${CLIENTS:-50}
JOBS=${JOBS:-2}
ROUNDS=${ROUNDS:-1}

# pages/s in pgbench's output file $1
tps_of() {
	sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$1"
}

# the median of the numbers on stdin, one a line
median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
