SELECT * FROM blog_bench.tag_page(:tag_slug);
