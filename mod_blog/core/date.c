/* SPDX-License-Identifier: Apache-2.0 */
/* date.c - calendar arithmetic without gmtime_r: no zone files, no locks. */
#include "core/date.h"

#define US_PER_SEC      1000000
#define SEC_PER_DAY     86400
/* Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch. */
#define PG_EPOCH_DAYS   10957

static char *
put2(char *d, int v)
{
    d[0] = (char) ('0' + v / 10);
    d[1] = (char) ('0' + v % 10);
    return d + 2;
}

/* Floor division: a negative time belongs to the day before. */
static int64_t
div_floor(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int
blog_format_date(int64_t us, char *d)
{
    int64_t     secs, days, sod, z, era, doe, yoe, doy, mp, y, m, dd;

    /* past this, days + the shifts below could overflow */
    if (us > INT64_MAX / 2 || us < INT64_MIN / 2)
        return -1;
    secs = div_floor(us, US_PER_SEC);
    days = div_floor(secs, SEC_PER_DAY);
    sod = secs - days * SEC_PER_DAY;

    /* civil_from_days (H. Hinnant): 719468 shifts 1970-01-01 to 0000-03-01 */
    z = days + PG_EPOCH_DAYS + 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    dd = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    if (y < 0 || y > 9999)
        return -1;
    d = put2(put2(d, (int) (y / 100)), (int) (y % 100));
    *d++ = '-';
    d = put2(d, (int) m);
    *d++ = '-';
    d = put2(d, (int) dd);
    *d++ = ' ';
    d = put2(d, (int) (sod / 3600));
    *d++ = ':';
    put2(d, (int) (sod / 60 % 60));
    return 0;
}
