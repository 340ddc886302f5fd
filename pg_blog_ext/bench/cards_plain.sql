-- SPDX-License-Identifier: Apache-2.0
-- What a card page (index_plain.sql, tag_plain.sql) sends after its posts,
-- as bench/run.sh runs it: the tags and comment counts of all the posts at
-- once (no N+1).  :card_ids are the ids the posts' query returns, bound as
-- an int[] parameter.  With COPIES=1, the counts are on the posts (1.3):
-- only the tags of their tag ids (:card_tag_ids).
\if :copies
SELECT t.id, t.slug, t.name FROM blog.tags t WHERE t.id = ANY (:card_tag_ids);
\else
SELECT pt.post_id, t.slug, t.name
  FROM blog.post_tags pt JOIN blog.tags t ON t.id = pt.tag_id
 WHERE pt.post_id = ANY (:card_ids) ORDER BY pt.post_id, pt.tag_id;
SELECT c.post_id, count(*)
  FROM blog.comments c
 WHERE c.post_id = ANY (:card_ids) GROUP BY c.post_id;
\endif
