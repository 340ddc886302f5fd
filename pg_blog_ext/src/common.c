/*-------------------------------------------------------------------------
 *
 * common.c
 *	  Slug validation, plan preparation and result helpers shared by the
 *	  page functions.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_blog.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"

PG_MODULE_MAGIC;

/*
 * Accept only what SPEC section 2 calls a slug, so that malformed input
 * never reaches a query.  The length is checked on the raw datum first:
 * an oversized argument is rejected without being detoasted.
 */
bool
blog_slug_arg_is_valid(Datum slug)
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
 * Prepare a query once per backend.  The plan cache replans it by itself
 * after DDL on the tables it reads.  The generic plan is forced: with the
 * default choice, "LIMIT $1" and "= ANY ($1)" make a custom plan look
 * cheaper, and the query would be planned again on every call.
 */
SPIPlanPtr
blog_prepare(const char *query, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan;

	plan = SPI_prepare_cursor(query, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	return plan;
}

/*
 * Set up materialize mode.  The caller's expected row type, when it has
 * one, saves rebuilding the result type from the catalog on every call.
 */
void
blog_materialize(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bits32		flags = 0;

	if (rsinfo != NULL && IsA(rsinfo, ReturnSetInfo) &&
		rsinfo->expectedDesc != NULL)
		flags |= MAT_SRF_USE_EXPECTED_DESC;
	InitMaterializedSRF(fcinfo, flags);
}

Datum
blog_value(HeapTuple tuple, TupleDesc desc, int fnum, bool *isnull)
{
	return SPI_getbinval(tuple, desc, fnum, isnull);
}

/*
 * A text column of a NOT NULL column, detoasted so that the tuplestore
 * never holds a pointer into a table's TOAST relation.
 */
Datum
blog_text_value(HeapTuple tuple, TupleDesc desc, int fnum)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tuple, desc, fnum, &isnull);

	if (isnull)
		elog(ERROR, "unexpected null in column %d", fnum);
	return PointerGetDatum(PG_DETOAST_DATUM_PACKED(d));
}

Datum
blog_text_array(Datum *elems, int nelems)
{
	if (nelems == 0)
		return PointerGetDatum(construct_empty_array(TEXTOID));
	return PointerGetDatum(construct_array(elems, nelems, TEXTOID,
										   -1, false, TYPALIGN_INT));
}
