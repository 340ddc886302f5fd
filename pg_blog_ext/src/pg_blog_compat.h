/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * pg_blog_compat.h
 *	  Every difference between the PostgreSQL majors pg_blog builds
 *	  against (15, 17 and 18), in one place, each under PG_VERSION_NUM:
 *	  the rest of the extension is written against the newest spelling.
 *	  (The module's magic block, which must be in one .c file, is in
 *	  common.c.)
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_BLOG_COMPAT_H
#define PG_BLOG_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "common/int.h"

/*
 * Three-way comparisons of integers, as common/int.h has them from
 * PostgreSQL 17 on.
 */
#if PG_VERSION_NUM < 170000
static inline int
pg_cmp_s32(int32 a, int32 b)
{
	return (a > b) - (a < b);
}

static inline int
pg_cmp_s64(int64 a, int64 b)
{
	return (a > b) - (a < b);
}
#endif

/*
 * PostgreSQL 18 spells a function that does not return pg_noreturn, a
 * specifier before the declaration, and no longer has the attribute
 * pg_attribute_noreturn() that earlier majors place after it.  GCC and
 * clang accept the attribute before the declaration too.
 */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 18's index_beginscan() takes the EXPLAIN ANALYZE counters of
 * the scan (none here) before the number of keys.
 */
#if PG_VERSION_NUM >= 180000
#define blog_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#else
#define blog_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#endif

#endif							/* PG_BLOG_COMPAT_H */
