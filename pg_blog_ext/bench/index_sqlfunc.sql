SELECT * FROM blog_bench.index_page(:n);
