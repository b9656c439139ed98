/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cordon-fs: cordon's first-party filesystem connector, an MCP server on
 * stdio. Every path argument is resolved beneath a root directory fd with
 * cordon_resolve() (openat2, or the held-fd walk), never authorized by string
 * comparison; creation and replacement go through resolved parent fds.
 *
 *   cordon-fs [--symlinks] [--max-read BYTES] ROOT[:ro]...
 *
 * ROOT is an absolute directory (as seen inside the sandbox). A tool path is
 * either relative (to the first root) or absolute; an absolute path selects
 * the root whose path is its longest whole-component prefix, and the rest is
 * resolved beneath that root's fd. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "version-flag.h"
#include "cleanup.h"
#include "fd-util.h"
#include "json-scan.h"
#include "log.h"
#include "mcp-server.h"
#include "parse-util.h"
#include "resolve.h"
#include "syscall-compat.h"

#define MAX_ROOTS	 64
#define MAX_WRITE_BYTES	 (16u * 1024 * 1024)
#define MAX_LIST_ENTRIES 10000
#define MAX_FIND_VISITS	 100000
#define MAX_READ_MANY	 64
#define MAX_DELETE_DEPTH 256
/* A request line must hold a write_file of MAX_WRITE_BYTES in either
 * encoding: UTF-8 text escaped at worst six bytes per byte (\u001F), base64
 * 4/3; plus room for the path and the envelope. */
#define MAX_REQUEST_LINE (6u * MAX_WRITE_BYTES + 1024u * 1024)

struct root {
	char *path;
	int fd;
	bool read_only;
};

struct fs {
	struct root roots[MAX_ROOTS];
	size_t n_roots;
	unsigned resolve_flags;
	unsigned long long max_read;
	struct cordon_caps caps; /* only the openat2 fields matter here */
};

/* Maps a tool path to (root, path beneath it). Selection compares whole
 * components only; containment is the resolver's job. */
static const struct root *pick_root(const struct fs *fs, const char *argname, const char *path, const char **ret_rel,
				    struct mcp_call_result *res)
{
	const struct root *best = NULL;

	if (!*path) {
		mcp_error(res, "argument '%s': must not be empty", argname);
		return NULL;
	}
	if (path[0] != '/') {
		*ret_rel = path;
		return &fs->roots[0];
	}
	for (size_t i = 0; i < fs->n_roots; i++)
		if (path_is_beneath(path, fs->roots[i].path) &&
		    (!best || strlen(fs->roots[i].path) > strlen(best->path)))
			best = &fs->roots[i];
	if (!best) {
		mcp_error(res, "argument '%s': %s is not beneath any root", argname, path);
		return NULL;
	}
	*ret_rel = strcmp(best->path, "/") == 0 ? path : path + strlen(best->path);
	return best;
}

static int resolve_err(struct mcp_call_result *res, const char *argname, const char *path, int r)
{
	const char *why;

	switch (-r) {
	case EXDEV:
		why = "leaves its root";
		break;
	case ELOOP:
		why = "goes through a symbolic link, which this root does not allow";
		break;
	case EMLINK:
		why = "is a file with several hard links; it is never written through";
		break;
	default:
		why = strerror(-r);
	}
	return mcp_error(res, "argument '%s': %s: %s", argname, path, why);
}

static int open_arg(struct fs *fs, const char *argname, const char *path, int flags, bool write, int *ret_fd,
		    struct mcp_call_result *res)
{
	struct cordon_resolve_how how = { .open_flags = flags, .mode = 0644, .flags = fs->resolve_flags };
	const struct root *root;
	const char *rel;
	int r;

	root = pick_root(fs, argname, path, &rel, res);
	if (!root)
		return -1;
	if (write && root->read_only)
		return mcp_error(res, "argument '%s': %s: the root %s is read-only", argname, path, root->path);
	r = cordon_resolve(root->fd, rel, &how, &fs->caps, ret_fd);
	if (r < 0)
		return resolve_err(res, argname, path, r);
	return 0;
}

static int parent_arg(struct fs *fs, const char *argname, const char *path, int *ret_dir, char **ret_name,
		      const struct root **ret_root, struct mcp_call_result *res)
{
	const struct root *root;
	const char *rel;
	int r;

	root = pick_root(fs, argname, path, &rel, res);
	if (!root)
		return -1;
	if (root->read_only)
		return mcp_error(res, "argument '%s': %s: the root %s is read-only", argname, path, root->path);
	r = cordon_resolve_parent(root->fd, rel, fs->resolve_flags, &fs->caps, ret_dir, ret_name);
	if (r == -EINVAL)
		return mcp_error(res, "argument '%s': %s does not name an entry inside a root", argname, path);
	if (r < 0)
		return resolve_err(res, argname, path, r);
	if (ret_root)
		*ret_root = root;
	return 0;
}

static const char *type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "directory";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

/* Sets obj.encoding and obj.content: text when the bytes are valid UTF-8
 * without NUL, base64 otherwise. With blob_res (read_file), the content is
 * not copied into a jansson string: *buf moves into blob_res->blob (or its
 * base64 does) and is written straight from there by the response encoder. */
static int content_json(char **buf, size_t len, json_t *obj, struct mcp_call_result *blob_res)
{
	bool text = json_text_valid(*buf, len);
	_cleanup_free_ char *b64 = NULL;
	char *data = *buf;
	json_t *s;

	if (!text) {
		size_t b64len = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);

		b64 = malloc(b64len);
		if (!b64)
			return -1;
		sodium_bin2base64(b64, b64len, (const unsigned char *)*buf, len, sodium_base64_VARIANT_ORIGINAL);
		data = b64;
		len = b64len - 1;
	}
	if (json_object_set_new(obj, "encoding", json_string(text ? "utf-8" : "base64")) < 0)
		return -1;
	if (!blob_res)
		return json_object_set_new(obj, "content", json_stringn_nocheck(data, len));
	s = json_string("");
	if (!s || json_object_set(obj, "content", s) < 0) {
		json_decref(s);
		return -1;
	}
	blob_res->blob_slot = s;
	json_decref(s); /* obj holds it */
	blob_res->blob = text ? TAKE_PTR(*buf) : TAKE_PTR(b64);
	blob_res->blob_len = len;
	return 0;
}

/* Reads a file into a result object. With blob, the content goes into
 * res's blob (see content_json()). */
static json_t *read_one(struct fs *fs, const char *argname, const char *path, unsigned long long offset,
			unsigned long long length, bool blob, struct mcp_call_result *res)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t want, cap, got = 0;
	json_t *o;

	if (open_arg(fs, argname, path, O_RDONLY, false, &fd, res) < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		mcp_error(res, "argument '%s': %s is not a regular file", argname, path);
		return NULL;
	}
	want = length && length < fs->max_read ? length : fs->max_read;
	/* Size the buffer to what the file holds (plus one byte to notice
	 * growth); only a file that grew since fstat() needs up to `want`. */
	cap = (unsigned long long)st.st_size > offset ? (unsigned long long)st.st_size - offset + 1 : 1;
	if (cap > want)
		cap = want ? want : 1;
	buf = malloc(cap);
	if (!buf) {
		mcp_error(res, "out of memory");
		return NULL;
	}
	while (got < want) {
		ssize_t n;

		if (got == cap) {
			char *nb = realloc(buf, want);

			if (!nb) {
				mcp_error(res, "out of memory");
				return NULL;
			}
			buf = nb;
			cap = want;
		}
		n = pread(fd, buf + got, cap - got, (off_t)(offset + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			mcp_error(res, "argument '%s': %s: read: %s", argname, path, strerror(errno));
			return NULL;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	o = json_pack("{s:s, s:I, s:I, s:I, s:b}", "path", path, "offset", (json_int_t)offset, "length",
		      (json_int_t)got, "size", (json_int_t)st.st_size, "truncated",
		      (unsigned long long)st.st_size > offset + got && (!length || length > got));
	if (!o || content_json(&buf, got, o, blob ? res : NULL) < 0) {
		json_decref(o);
		mcp_error(res, "out of memory");
		return NULL;
	}
	return o;
}

static int tool_read_file(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", "offset", "length", NULL };
	struct fs *fs = ctx;
	const char *path = NULL;
	unsigned long long offset = 0, length = 0;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0 ||
	    mcp_arg_uint(args, "offset", false, (1ULL << 53) - 1, &offset, res) < 0 ||
	    mcp_arg_uint(args, "length", false, (1ULL << 53) - 1, &length, res) < 0)
		return -1;
	res->structured = read_one(fs, "path", path, offset, length, true, res);
	return res->structured ? 0 : -1;
}

static int tool_read_many(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "paths", NULL };
	struct fs *fs = ctx;
	json_t *paths = json_object_get(args, "paths"), *files, *v;
	size_t i;

	if (mcp_args_only(args, allowed, res) < 0)
		return -1;
	if (!json_is_array(paths) || json_array_size(paths) == 0)
		return mcp_error(res, "argument 'paths': must be a non-empty array of strings");
	if (json_array_size(paths) > MAX_READ_MANY)
		return mcp_error(res, "argument 'paths': at most %d paths", MAX_READ_MANY);
	files = json_array();
	json_array_foreach(paths, i, v)
	{
		struct mcp_call_result one = { 0 };
		char name[32];
		json_t *o;

		snprintf(name, sizeof(name), "paths[%zu]", i);
		if (!json_is_string(v)) {
			json_decref(files);
			return mcp_error(res, "argument '%s': must be a string", name);
		}
		o = read_one(fs, name, json_string_value(v), 0, 0, false, &one);
		if (!o)
			o = json_pack("{s:s, s:s}", "path", json_string_value(v), "error", one.error);
		json_array_append_new(files, o);
	}
	res->structured = json_pack("{s:o}", "files", files);
	return 0;
}

static int tool_list_directory(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", NULL };
	struct fs *fs = ctx;
	const char *path = NULL;
	json_t *entries;
	DIR *d;
	struct dirent *de;
	int fd = -1;
	bool truncated = false;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0)
		return -1;
	if (open_arg(fs, "path", path, O_RDONLY | O_DIRECTORY, false, &fd, res) < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
	}
	entries = json_array();
	while ((de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (json_array_size(entries) >= MAX_LIST_ENTRIES) {
			truncated = true;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		json_array_append_new(entries, json_pack("{s:s, s:s, s:I}", "name", de->d_name, "type",
							 type_name(st.st_mode), "size", (json_int_t)st.st_size));
	}
	closedir(d);
	res->structured = json_pack("{s:s, s:o, s:b}", "path", path, "entries", entries, "truncated", truncated);
	return 0;
}

static int tool_stat(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", NULL };
	struct fs *fs = ctx;
	_cleanup_close_ int fd = -EBADF;
	const char *path = NULL;
	struct stat st;
	char mode[8];

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0)
		return -1;
	if (open_arg(fs, "path", path, O_PATH, false, &fd, res) < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
	snprintf(mode, sizeof(mode), "%04o", (unsigned)(st.st_mode & 07777));
	res->structured = json_pack("{s:s, s:s, s:I, s:s, s:I, s:I}", "path", path, "type", type_name(st.st_mode),
				    "size", (json_int_t)st.st_size, "mode", mode, "nlink", (json_int_t)st.st_nlink,
				    "mtime", (json_int_t)st.st_mtim.tv_sec);
	return 0;
}

struct find_state {
	const char *pattern;
	bool match_path;
	unsigned long long max_results, max_depth;
	unsigned long visits;
	bool truncated;
	json_t *matches;
};

/* Walks by fds: every directory is opened with O_NOFOLLOW relative to its
 * parent's fd, so nothing outside the start directory is ever visited. */
static void find_walk(struct find_state *st, int dfd, const char *prefix, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char rel[PATH_MAX];
		struct stat sb;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++st->visits > MAX_FIND_VISITS || json_array_size(st->matches) >= st->max_results) {
			st->truncated = true;
			break;
		}
		if (snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "", de->d_name) >= (int)sizeof(rel))
			continue;
		if (fnmatch(st->pattern, st->match_path ? rel : de->d_name, st->match_path ? FNM_PATHNAME : 0) == 0)
			json_array_append_new(st->matches, json_string(rel));
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode) &&
		    depth < st->max_depth) {
			int sub = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0) {
				find_walk(st, sub, rel, depth + 1);
				close(sub);
			}
		}
	}
	closedir(d);
}

static int tool_find(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", "pattern", "max_results", "max_depth", NULL };
	struct fs *fs = ctx;
	struct find_state st = { .max_results = 1000, .max_depth = 16 };
	_cleanup_close_ int fd = -EBADF;
	const char *path = NULL;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0 ||
	    mcp_arg_string(args, "pattern", true, &st.pattern, res) < 0 ||
	    mcp_arg_uint(args, "max_results", false, 10000, &st.max_results, res) < 0 ||
	    mcp_arg_uint(args, "max_depth", false, 64, &st.max_depth, res) < 0)
		return -1;
	if (open_arg(fs, "path", path, O_PATH | O_DIRECTORY, false, &fd, res) < 0)
		return -1;
	st.match_path = strchr(st.pattern, '/') != NULL;
	st.matches = json_array();
	find_walk(&st, fd, "", 1);
	res->structured = json_pack("{s:s, s:s, s:o, s:b}", "path", path, "pattern", st.pattern, "matches", st.matches,
				    "truncated", st.truncated);
	return 0;
}

/* Writes data to a fresh temporary file next to `name` in dir_fd, fsyncs it,
 * and renames it over `name` (or, with noreplace, only where nothing exists):
 * a reader sees the old content or the new, never a torn file. */
static int atomic_replace(int dir_fd, const char *name, const char *data, size_t len, bool noreplace, mode_t mode)
{
	unsigned char rnd[6];
	char tmp[NAME_MAX + 1];
	_cleanup_close_ int fd = -EBADF, dfd = -EBADF;
	struct stat st;
	int r;

	randombytes_buf(rnd, sizeof(rnd));
	if (snprintf(tmp, sizeof(tmp), ".cordon-tmp-%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		     rnd[5]) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* Keep the mode of a file being replaced. */
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		mode = st.st_mode & 0777;
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (r >= 0) {
		if (noreplace)
			r = renameat2(dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE) < 0 ? -errno : 0;
		else
			r = renameat(dir_fd, tmp, dir_fd, name) < 0 ? -errno : 0;
	}
	if (r < 0) {
		(void)unlinkat(dir_fd, tmp, 0);
		return r;
	}
	/* Make the rename itself durable. */
	dfd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

/* The bytes write_file is to store: for utf-8, the argument's own text
 * (*ret_data points into args; nothing is copied: a 16 MiB content would be
 * copied once more for nothing); for base64, a malloc'd decode in *ret_owned. */
static int decode_content(json_t *args, const char **ret_data, char **ret_owned, size_t *ret_len,
			  struct mcp_call_result *res)
{
	const char *content = NULL, *encoding = "utf-8";
	json_t *c;

	if (mcp_arg_string(args, "encoding", false, &encoding, res) < 0)
		return -1;
	c = json_object_get(args, "content");
	if (!json_is_string(c))
		return mcp_error(res, "argument 'content': required, must be a string");
	content = json_string_value(c);
	if (json_string_length(c) > MAX_WRITE_BYTES * 2)
		return mcp_error(res, "argument 'content': larger than %u bytes", MAX_WRITE_BYTES);
	if (strcmp(encoding, "utf-8") == 0) {
		if (json_string_length(c) > MAX_WRITE_BYTES)
			return mcp_error(res, "argument 'content': larger than %u bytes", MAX_WRITE_BYTES);
		*ret_data = content;
		*ret_len = json_string_length(c);
		return 0;
	}
	if (strcmp(encoding, "base64") == 0) {
		size_t cap = json_string_length(c) / 4 * 3 + 3, n;
		_cleanup_free_ char *bin = malloc(cap);

		if (!bin)
			return mcp_error(res, "out of memory");
		if (sodium_base642bin((unsigned char *)bin, cap, content, json_string_length(c), NULL, &n, NULL,
				      sodium_base64_VARIANT_ORIGINAL) != 0)
			return mcp_error(res, "argument 'content': not valid base64");
		if (n > MAX_WRITE_BYTES)
			return mcp_error(res, "argument 'content': larger than %u bytes", MAX_WRITE_BYTES);
		*ret_data = bin;
		*ret_len = n;
		*ret_owned = TAKE_PTR(bin);
		return 0;
	}
	return mcp_error(res, "argument 'encoding': must be \"utf-8\" or \"base64\"");
}

static int tool_write_file(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", "content", "encoding", NULL };
	struct fs *fs = ctx;
	_cleanup_free_ char *owned = NULL, *name = NULL;
	_cleanup_close_ int dir = -EBADF;
	const char *path = NULL, *data = NULL;
	size_t len = 0;
	int r;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0 ||
	    decode_content(args, &data, &owned, &len, res) < 0)
		return -1;
	if (parent_arg(fs, "path", path, &dir, &name, NULL, res) < 0)
		return -1;
	r = atomic_replace(dir, name, data, len, false, 0644);
	if (r < 0)
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(-r));
	res->structured = json_pack("{s:s, s:I}", "path", path, "bytes", (json_int_t)len);
	return 0;
}

/* Counts occurrences of needle in hay (non-overlapping). */
static size_t count_occurrences(const char *hay, size_t hlen, const char *needle, size_t nlen, size_t *ret_first)
{
	size_t count = 0;

	for (size_t i = 0; nlen && i + nlen <= hlen;) {
		const char *p = memmem(hay + i, hlen - i, needle, nlen);

		if (!p)
			break;
		if (count++ == 0)
			*ret_first = (size_t)(p - hay);
		i = (size_t)(p - hay) + nlen;
	}
	return count;
}

static unsigned line_of(const char *buf, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		if (buf[i] == '\n')
			line++;
	return line;
}

/* Appends "-"/"+" lines for one replacement to the diff text. */
static int diff_append(char **diff, size_t *dlen, unsigned line, const char *old, size_t olen, const char *new,
		       size_t nlen)
{
	FILE *f;
	char *buf = NULL;
	size_t blen = 0;

	f = open_memstream(&buf, &blen);
	if (!f)
		return -ENOMEM;
	fprintf(f, "@@ line %u @@\n", line);
	for (int pass = 0; pass < 2; pass++) {
		const char *s = pass ? new : old;
		size_t len = pass ? nlen : olen;

		for (size_t i = 0; i < len;) {
			const char *nl = memchr(s + i, '\n', len - i);
			size_t ll = nl ? (size_t)(nl - (s + i)) : len - i;

			fprintf(f, "%c%.*s\n", pass ? '+' : '-', (int)ll, s + i);
			i += ll + 1;
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	{
		char *n = realloc(*diff, *dlen + blen + 1);

		if (!n) {
			free(buf);
			return -ENOMEM;
		}
		memcpy(n + *dlen, buf, blen + 1);
		*diff = n;
		*dlen += blen;
	}
	free(buf);
	return 0;
}

static int tool_edit_file(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", "edits", "dryRun", NULL };
	struct fs *fs = ctx;
	_cleanup_free_ char *buf = NULL, *name = NULL, *diff = NULL;
	_cleanup_close_ int fd = -EBADF, dir = -EBADF;
	json_t *edits = json_object_get(args, "edits"), *e;
	const char *path = NULL;
	size_t len = 0, dlen = 0, i;
	bool dry = false;
	struct stat st;
	int r;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0 ||
	    mcp_arg_bool(args, "dryRun", &dry, res) < 0)
		return -1;
	if (!json_is_array(edits) || json_array_size(edits) == 0 || json_array_size(edits) > 256)
		return mcp_error(res, "argument 'edits': must be an array of 1 to 256 {oldText, newText} objects");
	if (open_arg(fs, "path", path, O_RDONLY, false, &fd, res) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return mcp_error(res, "argument 'path': %s is not a regular file", path);
	if ((unsigned long long)st.st_size > MAX_WRITE_BYTES)
		return mcp_error(res, "argument 'path': %s is larger than %u bytes", path, MAX_WRITE_BYTES);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return mcp_error(res, "out of memory");
	r = (int)read_full(fd, buf, (size_t)st.st_size);
	if (r < 0)
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(-r));
	len = (size_t)r;
	diff = strdup("");
	if (!diff)
		return mcp_error(res, "out of memory");

	json_array_foreach(edits, i, e)
	{
		json_t *o = json_object_get(e, "oldText"), *n = json_object_get(e, "newText");
		size_t olen, nlen, first = 0, count;
		char *nb;

		if (!json_is_object(e) || json_object_size(e) != 2 || !json_is_string(o) || !json_is_string(n))
			return mcp_error(
				res, "argument 'edits[%zu]': must be {\"oldText\": string, \"newText\": string}", i);
		olen = json_string_length(o);
		nlen = json_string_length(n);
		if (olen == 0)
			return mcp_error(res, "argument 'edits[%zu].oldText': must not be empty", i);
		count = count_occurrences(buf, len, json_string_value(o), olen, &first);
		if (count != 1)
			return mcp_error(res,
					 "argument 'edits[%zu].oldText': matches %zu times; it must match exactly once",
					 i, count);
		if (len - olen + nlen > MAX_WRITE_BYTES)
			return mcp_error(res, "argument 'edits[%zu]': the result would exceed %u bytes", i,
					 MAX_WRITE_BYTES);
		if (diff_append(&diff, &dlen, line_of(buf, first), json_string_value(o), olen, json_string_value(n),
				nlen) < 0)
			return mcp_error(res, "out of memory");
		nb = malloc(len - olen + nlen + 1);
		if (!nb)
			return mcp_error(res, "out of memory");
		memcpy(nb, buf, first);
		memcpy(nb + first, json_string_value(n), nlen);
		memcpy(nb + first + nlen, buf + first + olen, len - first - olen);
		free(buf);
		buf = nb;
		len = len - olen + nlen;
	}
	if (!dry) {
		if (parent_arg(fs, "path", path, &dir, &name, NULL, res) < 0)
			return -1;
		r = atomic_replace(dir, name, buf, len, false, st.st_mode & 0777);
		if (r < 0)
			return mcp_error(res, "argument 'path': %s: %s", path, strerror(-r));
	}
	res->structured =
		json_pack("{s:s, s:s, s:b, s:I}", "path", path, "diff", diff, "dryRun", dry, "bytes", (json_int_t)len);
	return 0;
}

static int tool_create_directory(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", NULL };
	struct fs *fs = ctx;
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir = -EBADF;
	const char *path = NULL;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0)
		return -1;
	if (parent_arg(fs, "path", path, &dir, &name, NULL, res) < 0)
		return -1;
	if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
	res->structured = json_pack("{s:s}", "path", path);
	return 0;
}

/* Copies a regular file between directory fds (for moves across
 * filesystems), then renames it into place without replacing anything. */
static int copy_across(int sdir, const char *sname, int ddir, const char *dname)
{
	_cleanup_close_ int in = -EBADF;
	_cleanup_free_ char *data = NULL;
	struct stat st;
	ssize_t n;

	in = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	if (fstat(in, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EXDEV;
	if ((unsigned long long)st.st_size > MAX_WRITE_BYTES)
		return -EFBIG;
	data = malloc((size_t)st.st_size + 1);
	if (!data)
		return -ENOMEM;
	n = read_full(in, data, (size_t)st.st_size);
	if (n < 0)
		return (int)n;
	return atomic_replace(ddir, dname, data, (size_t)n, true, st.st_mode & 0777);
}

static int tool_move(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "source", "destination", NULL };
	struct fs *fs = ctx;
	_cleanup_free_ char *sname = NULL, *dname = NULL;
	_cleanup_close_ int sdir = -EBADF, ddir = -EBADF;
	const char *src = NULL, *dst = NULL;
	int r;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "source", true, &src, res) < 0 ||
	    mcp_arg_string(args, "destination", true, &dst, res) < 0)
		return -1;
	if (parent_arg(fs, "source", src, &sdir, &sname, NULL, res) < 0 ||
	    parent_arg(fs, "destination", dst, &ddir, &dname, NULL, res) < 0)
		return -1;
	if (renameat2(sdir, sname, ddir, dname, RENAME_NOREPLACE) < 0) {
		r = -errno;
		if (r == -EXDEV) {
			/* Roots on different filesystems: copy, then remove. */
			r = copy_across(sdir, sname, ddir, dname);
			if (r == -EXDEV)
				return mcp_error(res, "argument 'source': %s: only files move across filesystems", src);
			if (r >= 0 && unlinkat(sdir, sname, 0) < 0)
				r = -errno;
		}
		if (r == -EEXIST)
			return mcp_error(res, "argument 'destination': %s already exists", dst);
		if (r < 0)
			return mcp_error(res, "argument 'source': %s: %s", src, strerror(-r));
	}
	res->structured = json_pack("{s:s, s:s}", "source", src, "destination", dst);
	return 0;
}

/* Removes everything inside the directory dfd, walking by fds and never
 * following a symlink (a link is removed, not its target). */
static int remove_tree(int dfd, unsigned depth, unsigned long *count)
{
	DIR *d;
	struct dirent *de;
	int fd, r = 0;

	if (depth > MAX_DELETE_DEPTH)
		return -ELOOP;
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0) {
				r = -errno;
				break;
			}
			r = remove_tree(sub, depth + 1, count);
			close(sub);
			if (r < 0)
				break;
			if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0) {
				r = -errno;
				break;
			}
		} else if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
			r = -errno;
			break;
		}
		(*count)++;
	}
	closedir(d);
	return r;
}

static int tool_delete(void *ctx, json_t *id, json_t *args, struct mcp_call_result *res)
{
	static const char *const allowed[] = { "path", "recursive", NULL };
	struct fs *fs = ctx;
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir = -EBADF;
	const char *path = NULL;
	bool recursive = false;
	unsigned long count = 0;
	struct stat st;
	int r;

	if (mcp_args_only(args, allowed, res) < 0 || mcp_arg_string(args, "path", true, &path, res) < 0 ||
	    mcp_arg_bool(args, "recursive", &recursive, res) < 0)
		return -1;
	if (parent_arg(fs, "path", path, &dir, &name, NULL, res) < 0)
		return -1;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (recursive) {
			_cleanup_close_ int sub = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0)
				return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
			r = remove_tree(sub, 1, &count);
			if (r < 0)
				return mcp_error(res, "argument 'path': %s: removing its contents: %s", path,
						 strerror(-r));
		}
		if (unlinkat(dir, name, AT_REMOVEDIR) < 0) {
			if (errno == ENOTEMPTY)
				return mcp_error(res, "argument 'path': %s is a non-empty directory; set recursive",
						 path);
			return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
		}
	} else if (unlinkat(dir, name, 0) < 0)
		return mcp_error(res, "argument 'path': %s: %s", path, strerror(errno));
	res->structured = json_pack("{s:s, s:I}", "path", path, "removed", (json_int_t)(count + 1));
	return 0;
}

/* clang-format off */
#define S_PATH "{\"type\":\"string\",\"description\":\"Path: absolute (beneath a root) or relative to the first root\"}"
static const struct mcp_tool tools[] = {
	{ "read_file", "Read file", "Read a file beneath a root; capped at the server's read limit.",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH ",\"offset\":{\"type\":\"integer\",\"minimum\":0},"
	  "\"length\":{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},"
	  "\"encoding\":{\"enum\":[\"utf-8\",\"base64\"]},\"offset\":{\"type\":\"integer\"},\"length\":{\"type\":\"integer\"},"
	  "\"size\":{\"type\":\"integer\"},\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"path\",\"content\",\"encoding\",\"truncated\"]}",
	  true, false, tool_read_file },
	{ "read_many", "Read several files", "Read up to 64 files; each entry has content or an error.",
	  "{\"type\":\"object\",\"properties\":{\"paths\":{\"type\":\"array\",\"items\":" S_PATH ",\"minItems\":1,\"maxItems\":64}},"
	  "\"required\":[\"paths\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"files\":{\"type\":\"array\"}},\"required\":[\"files\"]}",
	  true, false, tool_read_many },
	{ "list_directory", "List directory", "List the entries of a directory (at most 10000).",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH "},\"required\":[\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"entries\":{\"type\":\"array\"},"
	  "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"entries\"]}",
	  true, false, tool_list_directory },
	{ "stat", "Stat", "Type, size, mode, link count and modification time of a path.",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH "},\"required\":[\"path\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}},\"required\":[\"type\"]}",
	  true, false, tool_stat },
	{ "find", "Find", "Find entries whose name (or relative path, if the pattern has '/') matches a glob; symlinks are not followed.",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH ",\"pattern\":{\"type\":\"string\"},"
	  "\"max_results\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10000},\"max_depth\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":64}},"
	  "\"required\":[\"path\",\"pattern\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"matches\":{\"type\":\"array\"},\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"matches\"]}",
	  true, false, tool_find },
	{ "write_file", "Write file", "Create or atomically replace a file (written to a temporary file, fsynced, renamed).",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH ",\"content\":{\"type\":\"string\"},"
	  "\"encoding\":{\"enum\":[\"utf-8\",\"base64\"]}},\"required\":[\"path\",\"content\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}},\"required\":[\"bytes\"]}",
	  false, false, tool_write_file },
	{ "edit_file", "Edit file", "Apply exact-match replacements (each oldText must match exactly once); dryRun returns the diff only.",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH ",\"edits\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	  "\"properties\":{\"oldText\":{\"type\":\"string\"},\"newText\":{\"type\":\"string\"}},\"required\":[\"oldText\",\"newText\"],"
	  "\"additionalProperties\":false},\"minItems\":1,\"maxItems\":256},\"dryRun\":{\"type\":\"boolean\"}},"
	  "\"required\":[\"path\",\"edits\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{\"diff\":{\"type\":\"string\"},\"dryRun\":{\"type\":\"boolean\"}},\"required\":[\"diff\"]}",
	  false, false, tool_edit_file },
	{ "create_directory", "Create directory", "Create a directory (its parent must exist; an existing directory is fine).",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH "},\"required\":[\"path\"],\"additionalProperties\":false}",
	  NULL, false, false, tool_create_directory },
	{ "move", "Move", "Move or rename a file or directory within or across roots; never replaces an existing destination.",
	  "{\"type\":\"object\",\"properties\":{\"source\":" S_PATH ",\"destination\":" S_PATH "},"
	  "\"required\":[\"source\",\"destination\"],\"additionalProperties\":false}",
	  NULL, false, false, tool_move },
	{ "delete", "Delete", "Delete a file or an empty directory; a non-empty directory only with recursive (walked by fds, symlinks removed, never followed).",
	  "{\"type\":\"object\",\"properties\":{\"path\":" S_PATH ",\"recursive\":{\"type\":\"boolean\"}},"
	  "\"required\":[\"path\"],\"additionalProperties\":false}",
	  NULL, false, true, tool_delete },
};
/* clang-format on */

int main(int argc, char **argv)
{
	static struct fs fs = { .max_read = 1024 * 1024 };
	struct mcp_server srv = {
		.name = "cordon-fs",
		.version = CORDON_VERSION,
		.instructions = "Filesystem tools confined to the roots given at start. Paths are absolute "
				"(beneath a root) or relative to the first root.",
		.tools = tools,
		.n_tools = ELEMENTSOF(tools),
		.ctx = &fs,
		.max_line = MAX_REQUEST_LINE,
		.lift_argument = "content",
	};
	int r;

	cordon_version_flag(argc, argv, "cordon-fs");
	log_set_program(argv[0]);
	/* Transfers allocate buffers of up to 16 MiB per call (the file read,
	 * the decoded write content). glibc would mmap each one and unmap it on
	 * free, so every call faulted in 4096 fresh zeroed pages per 16 MiB (a
	 * fifth of a read's time in perf). Serve them from the heap instead and
	 * keep up to 64 MiB of freed heap for the next call: the connector's
	 * memory after a large transfer stays at about what that transfer
	 * needed. */
	if (mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) != 1 || mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024) != 1)
		log_debug("mallopt refused; large transfers fault in fresh pages each call");
	if (sodium_init() < 0)
		return log_error_errno(-EIO, "libsodium failed to initialize"), 1;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *colon;
		struct root *root;

		if (strcmp(a, "--symlinks") == 0) {
			fs.resolve_flags |= CORDON_RESOLVE_SYMLINKS;
			continue;
		}
		if (strcmp(a, "--max-read") == 0 && i + 1 < argc) {
			uint64_t v;

			if (parse_size(argv[++i], &v) < 0 || v == 0 || v > 64ULL * 1024 * 1024) {
				log_error("--max-read: '%s' is not a size between 1 and 64M", argv[i]);
				return 2;
			}
			fs.max_read = v;
			continue;
		}
		if (a[0] == '-') {
			log_error("unknown option '%s'", a);
			return 2;
		}
		if (fs.n_roots == MAX_ROOTS) {
			log_error("at most %d roots", MAX_ROOTS);
			return 2;
		}
		root = &fs.roots[fs.n_roots];
		colon = strrchr(a, ':');
		if (colon && strcmp(colon, ":ro") == 0) {
			*colon = '\0';
			root->read_only = true;
		}
		if (!path_is_absolute_canonical(a)) {
			log_error("root '%s': must be an absolute canonical path", a);
			return 2;
		}
		root->path = a;
		root->fd = open(a, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root->fd < 0)
			return log_error_errno(-errno, "root '%s'", a), 2;
		fs.n_roots++;
	}
	if (fs.n_roots == 0) {
		log_error("usage: cordon-fs [--symlinks] [--max-read SIZE] ROOT[:ro]...");
		return 2;
	}
	cordon_resolve_detect(&fs.caps);
	r = mcp_server_run(&srv, STDIN_FILENO, STDOUT_FILENO);
	if (r < 0)
		return log_error_errno(r, "serving MCP on stdio"), 1;
	return 0;
}
