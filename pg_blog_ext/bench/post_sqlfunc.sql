SELECT * FROM blog_bench.post_page(:post_slug);
