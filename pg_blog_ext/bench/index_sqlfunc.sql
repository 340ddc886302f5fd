-- SPDX-License-Identifier: Apache-2.0
SELECT * FROM blog_bench.index_page(:n);
