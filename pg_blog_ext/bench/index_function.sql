-- SPDX-License-Identifier: Apache-2.0
SELECT * FROM blog.index_page(:n);
