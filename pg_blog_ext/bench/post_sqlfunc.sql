-- SPDX-License-Identifier: Apache-2.0
SELECT * FROM blog_bench.post_page(:post_slug);
