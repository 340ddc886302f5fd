-- SPDX-License-Identifier: Apache-2.0
SELECT * FROM blog_bench.tag_page(:tag_slug);
