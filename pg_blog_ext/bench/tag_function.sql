-- SPDX-License-Identifier: Apache-2.0
SELECT * FROM blog.tag_page(:tag_slug);
