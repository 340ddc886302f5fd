/* SPDX-License-Identifier: Apache-2.0 */
/*-------------------------------------------------------------------------
 *
 * common.c
 *	  Slug validation, id lists and result helpers shared by the page
 *	  functions.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/qunique.h"
#include "utils/array.h"

/*
 * From PostgreSQL 18 on the module's magic block carries its name and
 * version (the control file's default_version, which the Makefile passes
 * as PG_BLOG_VERSION), which pg_get_loaded_modules() shows.
 */
#if PG_VERSION_NUM >= 180000
PG_MODULE_MAGIC_EXT(
					.name = "pg_blog",
					.version = PG_BLOG_VERSION
);
#else
PG_MODULE_MAGIC;
#endif

/* The qunique() and bsearch() order of int32 keys */
int
blog_int32_cmp(const void *a, const void *b)
{
	return pg_cmp_s32(*(const int32 *) a, *(const int32 *) b);
}

/*
 * sort_int32(): PostgreSQL's sort with the int32 comparison compiled in
 * (lib/sort_template.h), rather than qsort()'s call through a pointer per
 * comparison.
 */
#define ST_SORT sort_int32
#define ST_ELEMENT_TYPE int32
#define ST_COMPARE(a, b) pg_cmp_s32(*(a), *(b))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* The position of key in keys[0 .. nkeys) (sorted, distinct), or -1. */
int
blog_key_index(const int32 *keys, int nkeys, int32 key)
{
	const int32 *hit = bsearch(&key, keys, nkeys, sizeof(int32), blog_int32_cmp);

	return hit == NULL ? -1 : (int) (hit - keys);
}

/* Sort ids[0 .. n) and drop repeats; returns how many remain. */
int
blog_sort_unique(int32 *ids, int n)
{
	sort_int32(ids, n);
	return (int) qunique(ids, n, sizeof(int32), blog_int32_cmp);
}

/*
 * Accept only what docs/CONTRACT.md section 2 calls a slug, so that
 * malformed input never reaches a query.  The length is checked on the raw
 * datum first: an oversized argument is rejected without being detoasted.
 */
static bool
slug_is_valid(Datum slug)
{
	text	   *t;
	const char *p;
	Size		len;
	Size		i;

	if (toast_raw_datum_size(slug) - VARHDRSZ > BLOG_SLUG_MAX)
		return false;

	t = (text *) PG_DETOAST_DATUM_PACKED(slug);
	p = VARDATA_ANY(t);
	len = VARSIZE_ANY_EXHDR(t);
	if (len == 0)
		return false;
	for (i = 0; i < len; i++)
	{
		char		c = p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return false;
	}
	return true;
}

/*
 * Set up materialize mode.  The caller's expected row type, when it has
 * one, saves rebuilding the result type from the catalog on every call.
 */
static void
materialize(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bits32		flags = 0;

	if (rsinfo != NULL && IsA(rsinfo, ReturnSetInfo) &&
		rsinfo->expectedDesc != NULL)
		flags |= MAT_SRF_USE_EXPECTED_DESC;
	InitMaterializedSRF(fcinfo, flags);
}

/*
 * A page function: materialize mode, then build, which puts the page's
 * rows in the result, its reads between blog_reads_begin() and
 * blog_reads_end() (scan.c: the snapshot they read with).
 */
Datum
blog_page(FunctionCallInfo fcinfo, BlogPageFn build)
{
	materialize(fcinfo);
	blog_reads_begin();
	build(fcinfo);
	blog_reads_end();
	return (Datum) 0;
}

/*
 * The start of a page found by the slug of its first argument: fn with the
 * columns of read of the visible row whose slug it is.  False (a page
 * without rows) when the slug is not one or names no row.
 */
bool
blog_page_by_slug(FunctionCallInfo fcinfo, BlogRead read, BlogRowFn fn,
				  void *arg)
{
	Datum		slug = PG_GETARG_DATUM(0);

	return slug_is_valid(slug) && blog_fetch_by_text(read, slug, fn, arg);
}

/*
 * A one-dimensional text[] of elems[0 .. nelems) (detoasted, none null),
 * or '{}' for none.
 */
Datum
blog_text_array(Datum *elems, int nelems)
{
	return PointerGetDatum(construct_array(elems, nelems, TEXTOID, -1, false,
										   TYPALIGN_INT));
}
