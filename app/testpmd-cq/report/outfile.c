/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The output files (--json, --csv): checked before the run, so that a bad
 * path costs no run, and opened so that a device, a FIFO or a directory is
 * refused instead of written to (/dev/full) or read forever (/dev/zero).
 * Opens never block: a FIFO without a reader would hang a plain open().
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params.h"
#include "report.h"
#include "testpmd_cq.h"

static int
not_regular(const char *opt, const char *path)
{
	fprintf(stderr, TPCQ_PROG ": --%s: %s is not a regular file (a device, "
		"FIFO, socket or directory): name a file\n", opt, path);
	return -EINVAL;
}

/* The directory a new file at path would be created in must be writable. */
static int
check_dir(const char *opt, const char *path)
{
	char copy[PATH_MAX], *dir;
	struct stat st;
	int err;

	if (strlen(path) >= sizeof(copy)) {
		fprintf(stderr, TPCQ_PROG ": --%s: file name too long\n", opt);
		return -ENAMETOOLONG;
	}
	strcpy(copy, path);
	dir = dirname(copy);
	if (stat(dir, &st) != 0 || access(dir, W_OK | X_OK) != 0) {
		err = errno;
		fprintf(stderr, TPCQ_PROG ": --%s: cannot create %s: %s\n", opt,
			path, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, TPCQ_PROG ": --%s: cannot create %s: %s\n", opt,
			path, strerror(ENOTDIR));
		return -ENOTDIR;
	}
	return 0;
}

int
tpcq_outfile_check(const char *opt, const char *path)
{
	struct stat st;
	int err;

	if (stat(path, &st) != 0) {
		err = errno;
		if (err == ENOENT)
			return check_dir(opt, path);
		fprintf(stderr, TPCQ_PROG ": --%s: cannot use %s: %s\n", opt, path,
			strerror(err));
		return -err;
	}
	if (!S_ISREG(st.st_mode))
		return not_regular(opt, path);
	if (access(path, W_OK) != 0) {
		err = errno;
		fprintf(stderr, TPCQ_PROG ": --%s: cannot write %s: %s\n", opt,
			path, strerror(err));
		return -err;
	}
	return 0;
}

FILE *
tpcq_outfile_open(const char *opt, const char *path, bool append)
{
	struct stat st;
	int fd, err;
	FILE *f;

	fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC |
		  (append ? O_APPEND : 0), 0666);
	if (fd < 0) {
		err = errno;
		/* A FIFO without a reader: ENXIO, thanks to O_NONBLOCK. */
		if (err == ENXIO || err == EISDIR)
			not_regular(opt, path);
		else
			fprintf(stderr, TPCQ_PROG ": --%s: cannot open %s: %s\n",
				opt, path, strerror(err));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		not_regular(opt, path);
		return NULL;
	}
	if ((!append && ftruncate(fd, 0) != 0) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    (f = fdopen(fd, append ? "a" : "w")) == NULL) {
		err = errno;
		close(fd);
		fprintf(stderr, TPCQ_PROG ": --%s: cannot open %s: %s\n", opt,
			path, strerror(err));
		return NULL;
	}
	return f;
}

int
tpcq_outfile_head(const char *opt, const char *path, char *line, size_t cap,
		  struct tpcq_outfile_head *h)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	char *nl, last;
	int fd, err;

	memset(h, 0, sizeof(*h));
	line[0] = '\0';
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT)
			return 0;
		fprintf(stderr, TPCQ_PROG ": --%s: cannot read %s: %s\n", opt,
			path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return not_regular(opt, path);
	}
	h->exists = true;
	h->size = (uint64_t)st.st_size;
	/* At most cap - 1 bytes: a file of any size costs one bounded read. */
	while (got < cap - 1) {
		n = read(fd, line + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			fprintf(stderr, TPCQ_PROG ": --%s: cannot read %s: %s\n",
				opt, path, strerror(err));
			return -err;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	line[got] = '\0';
	nl = memchr(line, '\n', got);
	if (nl == NULL && got < h->size) {
		close(fd);
		fprintf(stderr, TPCQ_PROG ": --%s: %s has a first line longer than "
			"%zu bytes: not a testpmd-cq CSV; remove it or name "
			"another file\n", opt, path, cap - 1);
		return -EINVAL;
	}
	if (nl != NULL)
		*nl = '\0';
	/* A file edited on Windows ends its lines with CR LF. */
	n = (ssize_t)strlen(line);
	if (n > 0 && line[n - 1] == '\r')
		line[n - 1] = '\0';
	h->ends_with_newline = true;
	if (h->size > 0) {
		if (pread(fd, &last, 1, (off_t)h->size - 1) != 1) {
			err = errno != 0 ? errno : EIO;
			close(fd);
			fprintf(stderr, TPCQ_PROG ": --%s: cannot read %s: %s\n",
				opt, path, strerror(err));
			return -err;
		}
		h->ends_with_newline = last == '\n';
	}
	close(fd);
	return 0;
}

int
tpcq_outfiles_check(const struct tpcq_params *p)
{
	if (p->json_path != NULL && tpcq_outfile_check("json", p->json_path) != 0)
		return -1;
	if (p->record_path != NULL &&
	    tpcq_outfile_check("record", p->record_path) != 0)
		return -1;
	if (p->csv_path != NULL &&
	    (tpcq_outfile_check("csv", p->csv_path) != 0 ||
	     tpcq_report_csv_check(p) != 0))
		return -1;
	return 0;
}
