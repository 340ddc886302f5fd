SELECT * FROM blog.post_page(:post_slug);
