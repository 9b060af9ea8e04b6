/*
 * json_writer.h — a small streaming JSON writer shared by the JSON output formats (speedscope, d3, trace).
 *
 * It writes tokens straight to a FILE as they come: no document is built in memory, so a profile of any
 * size is written in constant extra memory (plus one flag per open container). The writer inserts the
 * commas and colons itself; callers only say what comes next:
 *
 *	json_begin_object(&w);
 *	json_key(&w, "name");
 *	json_string(&w, "main");
 *	json_end_object(&w);
 *
 * Strings are escaped as RFC 8259 requires (quote, backslash, every control character); other bytes pass
 * through as UTF-8. Bytes that are not valid UTF-8 are written as U+FFFD so that the output is always valid
 * JSON whatever a symbol table contains. Output is compact; json_newline() asks for a line break before the
 * next value, for files that should diff well line by line (whitespace between tokens is insignificant).
 */
#ifndef STACKREC_FORMATS_JSON_WRITER_H
#define STACKREC_FORMATS_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer {
	FILE *out;
	bool *has_items;  /* per open container: an element was written (the next needs a comma) */
	size_t depth;
	size_t capacity;
	bool after_key;	  /* a key was written: the next value follows its colon */
	bool newline;	  /* json_newline() was called: break the line before the next value */
};

void json_writer_init(struct json_writer *w, FILE *out);
/* Frees the container stack. Returns 0, or -1 if the stream had a write error. */
int json_writer_release(struct json_writer *w);

void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
/* The key of the next member of the current object. */
void json_key(struct json_writer *w, const char *key);

/* A string; NULL writes null. */
void json_string(struct json_writer *w, const char *s);
/* The first n bytes of s, which need not be NUL-terminated (stops early at a NUL). */
void json_string_n(struct json_writer *w, const char *s, size_t n);
void json_uint(struct json_writer *w, uint64_t value);
void json_int(struct json_writer *w, int64_t value);
void json_bool(struct json_writer *w, bool value);
void json_null(struct json_writer *w);
/* "0x..." lowercase hex: for addresses, which do not fit a JSON number's exact range (2^53). */
void json_hex(struct json_writer *w, uint64_t value);

/* Line break before the next value (after its comma). */
void json_newline(struct json_writer *w);
/* Ends a top-level value with "\n" (for JSON Lines, one value per line). */
void json_end_line(struct json_writer *w);

/* Shorthands for one object member. */
void json_kv_string(struct json_writer *w, const char *key, const char *s);
void json_kv_uint(struct json_writer *w, const char *key, uint64_t value);
void json_kv_int(struct json_writer *w, const char *key, int64_t value);
void json_kv_bool(struct json_writer *w, const char *key, bool value);
void json_kv_hex(struct json_writer *w, const char *key, uint64_t value);

#endif
