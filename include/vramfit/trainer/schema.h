/* schema.h - the trainer's config schema, read statically from the user's
 * checkout: the pydantic models of a Python source file (for the LTX-2
 * trainer src/ltx_trainer/config.py) and the modules it imports from its own
 * package. No Python runs.
 *
 * Understood: `class X(Base):` bodies with annotated fields, inheritance of
 * fields, `model_config = ConfigDict(extra=...)`, field types str, Path,
 * int, float, bool, None, Any, dict, list[...], tuple[...] (fixed or `...`),
 * set, Literal[...], Optional[...], Union[...], `A | B`, Annotated[...] with
 * Field(discriminator=...) and Tag(...), module-level aliases, quoted forward
 * references, `Field(default | ..., ge=, gt=, le=, lt=, multiple_of=,
 * min_length=, max_length=, strict=, alias=, validation_alias=)`, the
 * constrained types (conint, confloat, constr, conlist, PositiveInt and
 * friends, Strict*), annotated_types markers, Enum classes (their values),
 * populate_by_name, the validators of a class (@field_validator,
 * @model_validator, v1 forms, Annotated Before/After/Plain/WrapValidator)
 * and the keys that a before model validator may consume (its string
 * constants).
 * Anything else becomes a VF_PY_UNKNOWN type that carries its source text:
 * the checker reports it as "not checked", never as a failure.
 *
 * Limits (DESIGN.md convention 5): VF_SCHEMA_MAX_BYTES per source file,
 * VF_SCHEMA_MAX_MODULES files, VF_SCHEMA_MAX_DEPTH levels of nesting in a
 * type or of name resolution. */
#ifndef VRAMFIT_SCHEMA_H
#define VRAMFIT_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "vramfit/base/error.h"

#define VF_SCHEMA_MAX_BYTES (2u << 20)
#define VF_SCHEMA_MAX_MODULES 64
#define VF_SCHEMA_MAX_DEPTH 32
/* In an error's message: a file the schema reads is not valid Python. */
#define VF_SCHEMA_SYNTAX_MARK "not valid Python"
/* In an error's message: a module of the trainer's own package that a file
 * the schema reads imports at its top is not in the checkout. */
#define VF_SCHEMA_IMPORT_MARK "ModuleNotFoundError"

/* Whether a vf_schema_load error says Python itself would stop importing
 * the config module (a syntax error, a missing module of its package): the
 * trainer cannot start, whatever the config says. */
static inline bool vf_schema_cannot_import(const char *msg)
{
	return strstr(msg, VF_SCHEMA_SYNTAX_MARK) || strstr(msg, VF_SCHEMA_IMPORT_MARK);
}

enum vf_pytype_kind {
	VF_PY_ANY,
	VF_PY_STR,     /* str, Path */
	VF_PY_INT,
	VF_PY_FLOAT,
	VF_PY_BOOL,
	VF_PY_NONE,
	VF_PY_LITERAL, /* literals[] */
	VF_PY_LIST,    /* list, set, Sequence: args[0] the item type (or none) */
	VF_PY_TUPLE,   /* args[] per position; variadic: args[0] for every one */
	VF_PY_DICT,    /* an open mapping */
	VF_PY_MODEL,   /* model */
	VF_PY_UNION,   /* args[] the members */
	VF_PY_UNKNOWN, /* text: what the reader did not understand */
};

struct vf_pyliteral {
	enum vf_pytype_kind kind; /* VF_PY_STR, VF_PY_INT, VF_PY_FLOAT, VF_PY_BOOL, VF_PY_NONE */
	const char *text;         /* the value: abc, 3, True, None */
};

struct vf_pymodel;

/* pydantic's constraints on a value: Field(ge=, gt=, le=, lt=, multiple_of=,
 * min_length=, max_length=, strict=, allow_inf_nan=, pattern=), conint/
 * confloat/constr/conlist, PositiveInt and friends, annotated_types markers
 * (Gt, Ge, Lt, Le, Interval, MultipleOf, MinLen, MaxLen, Len). */
struct vf_pybounds {
	bool has_ge, has_gt, has_le, has_lt, has_multiple_of, has_min_len, has_max_len;
	double ge, gt, le, lt, multiple_of, min_len, max_len;
	bool strict;         /* Strict*, strict=True: no lax-mode coercion */
	bool finite;         /* FiniteFloat, allow_inf_nan=False */
	const char *pattern; /* a regex (not checked: Python's regex dialect) */
	const char *must_exist; /* FilePath, DirectoryPath: what must exist (not checked) */
};

/* A @field_validator / @model_validator (or v1 @validator / @root_validator,
 * or an Annotated Before/After/Plain/WrapValidator) in the trainer's source. */
struct vf_pyvalidator {
	const char *name;   /* the function */
	const char *file;
	size_t line;
	const char *mode;   /* "before", "after", "plain", "wrap" */
	const char **fields; /* field validators: the fields named ("*": all) */
	size_t nfields;
};

struct vf_pytype {
	enum vf_pytype_kind kind;
	struct vf_pytype **args;
	size_t nargs;
	bool variadic;
	struct vf_pyliteral *literals;
	size_t nliterals;
	struct vf_pymodel *model;
	const char *discriminator; /* UNION: the field named by Field(discriminator=) */
	const char *tag;           /* a union member's Tag("...") */
	const char *text;          /* UNKNOWN: the source text; LITERAL of an Enum: its class */
	struct vf_pybounds bounds;
	const struct vf_pyvalidator *validator; /* Annotated[..., BeforeValidator(f)] etc. */
};

struct vf_pyfield {
	const char *name;
	struct vf_pytype *type;
	bool required;             /* no default, no default_factory */
	struct vf_pybounds b;      /* Field(...)'s own constraints */
	const char **aliases;      /* alias=, validation_alias= (AliasChoices: each) */
	size_t naliases;
	bool alias_unknown;        /* an alias vramfit cannot read (AliasPath, a call) */
	const char *file;          /* where it is defined */
	size_t line;
};

struct vf_pymodel {
	const char *name;
	const char *file;          /* relative to the trainer directory */
	size_t line;
	struct vf_pyfield *fields;
	size_t nfields, alloc;
	bool forbid;               /* extra="forbid": unknown keys are errors */
	bool open;                 /* extra="allow", or a base the reader could not follow */
	const char *open_why;      /* why open / why not forbid */
	const char **consumed;     /* keys a before-validator may take out */
	size_t nconsumed, calloc_;
	bool by_name;              /* populate_by_name / validate_by_name: names and aliases */
	struct vf_pyvalidator *validators; /* field and model validators, inherited too */
	size_t nvalidators, valloc_;
	bool building;             /* resolution in progress (cycles) */
};

struct vf_schema;

/* Read root_class from file (relative to dir, e.g. "src/ltx_trainer/config.py"),
 * following `from <pkg>... import` into dir/src/<pkg>/... (or dir/<pkg>/...).
 * VF_ENOTFOUND when file is missing; VF_ERR when root_class is not a class
 * there, a file is over its limit, or a file the schema reads does not
 * parse as Python (an unclosed bracket or string, a block with no body,
 * an unindent to no enclosing level): "config.py:12: ..." naming the line
 * Python itself would stop at. Caller owns *out; vf_schema_free(). */
vf_status vf_schema_load(const char *dir, const char *file, const char *root_class,
			 struct vf_schema **out, struct vf_error *err);

/* The same on one in-memory source (imports are not followed; what they would
 * bring is UNKNOWN). name names it in errors. */
vf_status vf_schema_parse_mem(const char *text, size_t len, const char *name,
			      const char *root_class, struct vf_schema **out, struct vf_error *err);

void vf_schema_free(struct vf_schema *s);

/* Borrowed; valid until vf_schema_free(). */
const struct vf_pymodel *vf_schema_root(const struct vf_schema *s);
/* A model by class name (any module read), NULL when none. */
const struct vf_pymodel *vf_schema_model(const struct vf_schema *s, const char *name);
const struct vf_pyfield *vf_pymodel_field(const struct vf_pymodel *m, const char *name);
/* The field a config key names: by alias when the field has aliases (and by
 * name too when the model populates by name), else by name. NULL when none. */
const struct vf_pyfield *vf_pymodel_field_for_key(const struct vf_pymodel *m, const char *key);
/* True when key is accepted for f (see vf_pymodel_field_for_key). */
bool vf_pyfield_accepts(const struct vf_pymodel *m, const struct vf_pyfield *f, const char *key);
bool vf_pymodel_consumes(const struct vf_pymodel *m, const char *key);

/* True when the dotted path (keys; sequence elements by index) names a
 * field of the root model, through nested models, unions and lists. */
bool vf_schema_has_path(const struct vf_schema *s, const char *path);

/* Counts for reports: models built, fields in them, source files read. */
void vf_schema_stats(const struct vf_schema *s, size_t *models, size_t *fields, size_t *files);

/* The type as Python-like text ("int | None", "Literal['a', 'b']").
 * Writes at most n bytes. */
void vf_pytype_text(const struct vf_pytype *t, char *out, size_t n);

#endif
