# SPDX-License-Identifier: Apache-2.0
"""An independent renderer of the blog, built from docs/CONTRACT.md
sections 1 and 5.

It knows nothing of the server or the database: every page is computed
from the seed formulas, so a server that agrees with it for every slug is
reading the seeded data and rendering it as docs/CONTRACT.md says.
`check_golden()` proves the renderer itself against tests/golden before anyone
trusts it.
"""

import datetime
import hashlib
import os

AUTHORS = {
    1: "Ada Lovelace", 2: "Alan Turing", 3: "Zoë O'Brien", 4: "Grace Hopper",
    5: "Edsger W. Dijkstra", 6: "Barbara Liskov", 7: "李伟", 8: "Donald Knuth",
    9: 'Frances "Fran" Allen', 10: "Ken & Dennis",
}
TAG_NAMES = {5: "C & C++", 12: "Zürich", 21: "<script>", 30: '"Quoted"'}
TITLES = ["Getting started", "Fish & Chips", "Why <b>bold</b> matters",
          '"Quoted" thoughts', "It's complicated", "Café society",
          "数据库 notes", "Plain words"]
SENTENCE = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit & sed do "
            "<eiusmod> tempor. ")
READERS = ["Reader One", "Sam & Max", "Jürgen", "<anon>", "O'Hara",
           'Quinn "Q"']
COMMENT_TEXTS = ["Great post!", "I disagree & here is why.",
                 "See <https://example.com>.", 'Thanks — "very" helpful.']
EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
NPOSTS = 1000
NTAGS = 30
COMPUTE_LIMIT = 20000


# ------------------------------------------------------------------ data
def tag_name(t):
    return TAG_NAMES.get(t, "Topic %d" % t)


def post_tags(p):
    n = 3 if p % 5 < 3 else 2
    return sorted(((7 * p + 11 * k) % 30) + 1 for k in range(n))


def comment_count(p):
    return p % 21 if p % 2 == 1 else 20 - ((p - 1) % 21)


def published(p):
    return EPOCH + datetime.timedelta(hours=6 * (p - 1))


def post(p, title=None):
    return {
        "id": p,
        "slug": "post-%d" % p,
        "title": title if title is not None else
        "Post %d: %s" % (p, TITLES[p % 8]),
        "summary": "A short summary of post %d." % p,
        "body": "Body of post %d. " % p + SENTENCE * (5 + p % 10),
        "published_at": published(p),
        "author": AUTHORS[(p % 10) + 1],
        "tags": post_tags(p),
        "ncomments": comment_count(p),
    }


def comments(p):
    out = []
    for k in range(1, comment_count(p) + 1):
        out.append({
            "author_name": READERS[(p + k) % 6],
            "body": "Comment %d on post %d: %s" % (k, p, COMMENT_TEXTS[k % 4]),
            "created_at": published(p) + datetime.timedelta(minutes=k),
        })
    return out


def posts_with_tag(t):
    # newest first; published_at grows with id, so "ties by higher id" is
    # simply descending id
    return [p for p in range(NPOSTS, 0, -1) if t in post_tags(p)]


def totals():
    """Counts the seed must produce (docs/CONTRACT.md section 1)."""
    return {
        "authors": len(AUTHORS),
        "tags": NTAGS,
        "posts": NPOSTS,
        "post_tags": sum(len(post_tags(p)) for p in range(1, NPOSTS + 1)),
        "comments": sum(comment_count(p) for p in range(1, NPOSTS + 1)),
    }


# ------------------------------------------------------------------ HTML
def esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&#34;").replace("'", "&#39;"))


def date(d):
    return d.strftime("%Y-%m-%d %H:%M")


def count_text(n):
    return "1 comment" if n == 1 else "%d comments" % n


def layout(title, content):
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            "<title>%s · Blog</title>\n</head>\n<body>\n"
            '<header><a href="/">Blog</a></header>\n<main>\n%s</main>\n'
            "</body>\n</html>\n" % (esc(title), content))


def tag_list(tags):
    return ('<ul class="tags">' + "".join(
        '<li><a href="/tag/tag-%d">%s</a></li>' % (t, esc(tag_name(t)))
        for t in tags) + "</ul>\n")


def card(po):
    return ("<article>\n"
            '<h2><a href="/post/%s">%s</a></h2>\n'
            '<p class="meta">by %s on %s · %s</p>\n'
            "%s<p>%s</p>\n</article>\n" % (
                esc(po["slug"]), esc(po["title"]), esc(po["author"]),
                date(po["published_at"]), count_text(po["ncomments"]),
                tag_list(po["tags"]), esc(po["summary"])))


def render_index(titles=None):
    titles = titles or {}
    ids = range(NPOSTS, NPOSTS - 20, -1)
    content = "<h1>Latest posts</h1>\n" + "".join(
        card(post(p, titles.get(p))) for p in ids)
    return layout("Latest posts", content).encode()


def render_tag(t, titles=None):
    titles = titles or {}
    name = tag_name(t)
    content = "<h1>Posts tagged %s</h1>\n" % esc(name) + "".join(
        card(post(p, titles.get(p))) for p in posts_with_tag(t))
    return layout("Posts tagged " + name, content).encode()


def render_post(p, title=None):
    po = post(p, title)
    cs = comments(p)
    content = ("<article>\n<h1>%s</h1>\n"
               '<p class="meta">by %s on %s</p>\n'
               '%s<div class="body">%s</div>\n</article>\n'
               '<section class="comments">\n<h2>%s</h2>\n' % (
                   esc(po["title"]), esc(po["author"]),
                   date(po["published_at"]), tag_list(po["tags"]),
                   esc(po["body"]), count_text(len(cs))))
    for c in cs:
        content += ('<div class="comment">\n<p class="meta">%s on %s</p>\n'
                    "<p>%s</p>\n</div>\n" % (esc(c["author_name"]),
                                            date(c["created_at"]),
                                            esc(c["body"])))
    content += "</section>\n"
    return layout(po["title"], content).encode()


def compute_sum(limit=COMPUTE_LIMIT):
    total = 0
    for n in range(2, limit):
        d = 2
        prime = True
        while d * d <= n:
            if n % d == 0:
                prime = False
                break
            d += 1
        if prime:
            total += n
    return total


def render_compute(limit=COMPUTE_LIMIT):
    content = ("<h1>Compute</h1>\n<p>Sum of primes below %d: %d</p>\n"
               % (limit, compute_sum(limit)))
    return layout("Compute", content).encode()


def render_not_found():
    return layout("Not found", "<h1>Not found</h1>\n").encode()


def render_unavailable():
    return layout("Service unavailable",
                  "<h1>Service unavailable</h1>\n").encode()


_COMPUTE_CACHE = []


def render_path(path):
    """(status, body) docs/CONTRACT.md gives for a GET of an uncached route."""
    if path == "/":
        return 200, render_index()
    if path == "/compute":
        if not _COMPUTE_CACHE:
            _COMPUTE_CACHE.append(render_compute())
        return 200, _COMPUTE_CACHE[0]
    for prefix, n, render in (("/post/post-", NPOSTS, render_post),
                              ("/tag/tag-", NTAGS, render_tag)):
        if path.startswith(prefix):
            num = path[len(prefix):]
            if num.isdigit() and not num.startswith("0") and 1 <= int(num) <= n:
                return 200, render(int(num))
    return 404, render_not_found()


# ---------------------------------------------------------------- golden
def golden_dir():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "golden")


def manifest():
    """[(status, path, file, sha256)] from tests/golden/MANIFEST."""
    rows = []
    with open(os.path.join(golden_dir(), "MANIFEST")) as f:
        for line in f:
            if line.strip():
                st, path, name, sha = line.split()
                rows.append((int(st), path, name, sha))
    return rows


def check_golden():
    """Problems found comparing this renderer with tests/golden (empty: ok)."""
    problems = []
    for st, path, name, sha in manifest():
        with open(os.path.join(golden_dir(), name), "rb") as f:
            gold = f.read()
        if hashlib.sha256(gold).hexdigest() != sha:
            problems.append("golden %s does not match its MANIFEST sha256" % name)
        rst, body = render_path(path)
        if rst != st or body != gold:
            problems.append("reference renders %s as %d/%d bytes, golden %s is %d/%d"
                            % (path, rst, len(body), name, st, len(gold)))
    return problems


if __name__ == "__main__":
    probs = check_golden()
    for p in probs:
        print(p)
    print("reference vs golden: %d files, %d problems" % (len(manifest()), len(probs)))
    print("totals:", totals())
    raise SystemExit(1 if probs else 0)
