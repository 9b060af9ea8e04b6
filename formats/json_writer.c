/*
 * json_writer.c — the streaming JSON writer of json_writer.h: separators from a stack of per-container
 * flags, RFC 8259 string escaping, and UTF-8 validation so that any byte string becomes valid JSON.
 */
#include "json_writer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

void json_writer_init(struct json_writer *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

int json_writer_release(struct json_writer *w)
{
	free(w->has_items);
	w->has_items = NULL;
	w->depth = w->capacity = 0;
	return ferror(w->out) ? -1 : 0;
}

/* Writes what must precede a value: its comma (in a container after another element) and a line break. */
static void before_value(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth) {
		if (w->has_items[w->depth - 1])
			putc(',', w->out);
		w->has_items[w->depth - 1] = true;
	}
	if (w->newline) {
		if (w->depth) /* never before a top-level value */
			putc('\n', w->out);
		w->newline = false;
	}
}

static void open_container(struct json_writer *w, char c)
{
	before_value(w);
	GROW(w->has_items, w->capacity, w->depth + 1);
	w->has_items[w->depth++] = false;
	putc(c, w->out);
}

static void close_container(struct json_writer *w, char c)
{
	if (w->depth)
		w->depth--;
	w->newline = false;
	putc(c, w->out);
}

void json_begin_object(struct json_writer *w)
{
	open_container(w, '{');
}

void json_end_object(struct json_writer *w)
{
	close_container(w, '}');
}

void json_begin_array(struct json_writer *w)
{
	open_container(w, '[');
}

void json_end_array(struct json_writer *w)
{
	close_container(w, ']');
}

static void write_escaped(FILE *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	putc('"', out);
	while (i < n && s[i]) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\b':
			fputs("\\b", out);
			break;
		case '\f':
			fputs("\\f", out);
			break;
		default:
			if (c < 0x20) {
				fprintf(out, "\\u%04x", c);
				break;
			}
			/* A sequence is 4 bytes at most: the bytes left beyond those are not counted again for
			 * every character (a 100 KB name took 16 s). */
			len = utf8_sequence_length(s + i, strnlen(str + i, n - i < 4 ? n - i : 4));
			if (!len) {
				fputs("\xef\xbf\xbd", out); /* U+FFFD for one invalid byte */
				break;
			}
			fwrite(s + i, 1, len, out);
			i += len;
			continue;
		}
		i++;
	}
	putc('"', out);
}

void json_key(struct json_writer *w, const char *key)
{
	before_value(w);
	write_escaped(w->out, key, strlen(key));
	putc(':', w->out);
	w->after_key = true;
}

void json_string(struct json_writer *w, const char *s)
{
	if (!s) {
		json_null(w);
		return;
	}
	json_string_n(w, s, strlen(s));
}

void json_string_n(struct json_writer *w, const char *s, size_t n)
{
	before_value(w);
	write_escaped(w->out, s, n);
}

void json_uint(struct json_writer *w, uint64_t value)
{
	before_value(w);
	fprintf(w->out, "%" PRIu64, value);
}

void json_int(struct json_writer *w, int64_t value)
{
	before_value(w);
	fprintf(w->out, "%" PRId64, value);
}

void json_bool(struct json_writer *w, bool value)
{
	before_value(w);
	fputs(value ? "true" : "false", w->out);
}

void json_null(struct json_writer *w)
{
	before_value(w);
	fputs("null", w->out);
}

void json_hex(struct json_writer *w, uint64_t value)
{
	before_value(w);
	fprintf(w->out, "\"0x%" PRIx64 "\"", value);
}

void json_newline(struct json_writer *w)
{
	w->newline = true;
}

void json_end_line(struct json_writer *w)
{
	w->newline = false;
	putc('\n', w->out);
}

void json_kv_string(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_string(w, s);
}

void json_kv_uint(struct json_writer *w, const char *key, uint64_t value)
{
	json_key(w, key);
	json_uint(w, value);
}

void json_kv_int(struct json_writer *w, const char *key, int64_t value)
{
	json_key(w, key);
	json_int(w, value);
}

void json_kv_bool(struct json_writer *w, const char *key, bool value)
{
	json_key(w, key);
	json_bool(w, value);
}

void json_kv_hex(struct json_writer *w, const char *key, uint64_t value)
{
	json_key(w, key);
	json_hex(w, value);
}
