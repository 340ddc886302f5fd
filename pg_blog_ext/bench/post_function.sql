-- SPDX-License-Identifier: Apache-2.0
SELECT * FROM blog.post_page(:post_slug);
