SELECT * FROM blog.tag_page(:tag_slug);
