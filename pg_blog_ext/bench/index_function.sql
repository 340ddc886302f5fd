SELECT * FROM blog.index_page(:n);
