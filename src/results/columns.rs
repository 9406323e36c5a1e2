//! One typed list of columns per result table: each column is declared once,
//! with its name, Arrow type, nullability and how to read it from a row, and
//! both the schema and the record batch come from that list.

use crate::error::{Error, Result};
use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanBuilder, Float64Builder, RecordBatch, StringBuilder, TimestampMicrosecondBuilder,
    UInt32Builder, UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::borrow::Cow;
use std::sync::Arc;

/// A column's value in one row.
pub(crate) enum Cell<'a> {
    U32(Option<u32>),
    U64(Option<u64>),
    F64(Option<f64>),
    Bool(Option<bool>),
    Str(Option<Cow<'a, str>>),
    /// Microseconds since the Unix epoch, UTC.
    Time(Option<i64>),
    Bin(Option<&'a [u8]>),
}

/// The Arrow type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    U32,
    U64,
    F64,
    Bool,
    Str,
    Time,
    Bin,
}

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::U32 => DataType::UInt32,
            Kind::U64 => DataType::UInt64,
            Kind::F64 => DataType::Float64,
            Kind::Bool => DataType::Boolean,
            Kind::Str => DataType::Utf8,
            Kind::Time => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Kind::Bin => DataType::Binary,
        }
    }
}

type Getter<T> = Box<dyn for<'r> Fn(&'r T) -> Cell<'r> + Send + Sync>;

/// One column of a table whose rows are `T`.
pub(crate) struct Column<T> {
    name: Cow<'static, str>,
    kind: Kind,
    nullable: bool,
    get: Getter<T>,
}

impl<T> Column<T> {
    /// A column; `get` reads its value from a row.
    pub(crate) fn new(
        name: impl Into<Cow<'static, str>>,
        kind: Kind,
        nullable: bool,
        get: impl for<'r> Fn(&'r T) -> Cell<'r> + Send + Sync + 'static,
    ) -> Self {
        Column {
            name: name.into(),
            kind,
            nullable,
            get: Box::new(get),
        }
    }
}

/// Shorthands for the usual kinds: `col!(name, kind, |row| value)`, where
/// `kind` is `u32`, `u64`, `f64`, `str`, `time` or `bin` for a column that
/// is never null, and `u32?`, `u64?`, `f64?`, `bool?`, `str?` for a nullable
/// one (`value` an `Option`). A `NaN` float is written as null.
macro_rules! col {
    (@make $name:expr, $kind:ident, $nullable:expr, |$r:ident $(: $t:ty)?| $cell:expr) => {
        $crate::results::columns::Column::new(
            $name,
            $crate::results::columns::Kind::$kind,
            $nullable,
            move |$r $(: $t)?| $cell,
        )
    };
    ($name:expr, u32, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, U32, false, |$r $(: $t)?| $crate::results::columns::Cell::U32(Some($v)))
    };
    ($name:expr, u32?, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, U32, true, |$r $(: $t)?| $crate::results::columns::Cell::U32($v))
    };
    ($name:expr, u64, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, U64, false, |$r $(: $t)?| $crate::results::columns::Cell::U64(Some($v)))
    };
    ($name:expr, u64?, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, U64, true, |$r $(: $t)?| $crate::results::columns::Cell::U64($v))
    };
    ($name:expr, f64, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, F64, false, |$r $(: $t)?| $crate::results::columns::Cell::F64(Some($v)))
    };
    ($name:expr, f64?, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, F64, true, |$r $(: $t)?| $crate::results::columns::Cell::F64($v))
    };
    ($name:expr, bool?, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, Bool, true, |$r $(: $t)?| $crate::results::columns::Cell::Bool($v))
    };
    ($name:expr, str, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, Str, false, |$r $(: $t)?| $crate::results::columns::Cell::Str(Some(
            std::borrow::Cow::from($v)
        )))
    };
    ($name:expr, str?, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, Str, true, |$r $(: $t)?| $crate::results::columns::Cell::Str(
            ($v).map(std::borrow::Cow::from)
        ))
    };
    ($name:expr, time, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, Time, false, |$r $(: $t)?| $crate::results::columns::Cell::Time(Some($v)))
    };
    ($name:expr, bin, |$r:ident $(: $t:ty)?| $v:expr) => {
        col!(@make $name, Bin, false, |$r $(: $t)?| $crate::results::columns::Cell::Bin(Some($v)))
    };
}
pub(crate) use col;

/// The Arrow schema of `columns`.
pub(crate) fn schema<T>(columns: &[Column<T>]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(c.name.as_ref(), c.kind.data_type(), c.nullable))
            .collect::<Vec<_>>(),
    ))
}

/// `rows` as a record batch of `columns`.
pub(crate) fn batch<'a, T: 'a>(
    columns: &[Column<T>],
    rows: impl Iterator<Item = &'a T> + Clone,
) -> Result<RecordBatch> {
    let arrays: Vec<ArrayRef> = columns.iter().map(|c| array(c, rows.clone())).collect();
    RecordBatch::try_new(schema(columns), arrays).map_err(|e| Error::format("building results", e))
}

fn array<'a, T: 'a>(c: &Column<T>, rows: impl Iterator<Item = &'a T>) -> ArrayRef {
    let wrong = || unreachable!("column {} yields a value of another kind", c.name);
    match c.kind {
        Kind::U32 => {
            let mut b = UInt32Builder::new();
            for r in rows {
                let Cell::U32(v) = (c.get)(r) else { wrong() };
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
        Kind::U64 => {
            let mut b = UInt64Builder::new();
            for r in rows {
                let Cell::U64(v) = (c.get)(r) else { wrong() };
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
        Kind::F64 => {
            let mut b = Float64Builder::new();
            for r in rows {
                let Cell::F64(v) = (c.get)(r) else { wrong() };
                // NaN means no data: null.
                b.append_option(v.filter(|v| !v.is_nan()));
            }
            Arc::new(b.finish())
        }
        Kind::Bool => {
            let mut b = BooleanBuilder::new();
            for r in rows {
                let Cell::Bool(v) = (c.get)(r) else { wrong() };
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
        Kind::Str => {
            let mut b = StringBuilder::new();
            for r in rows {
                let Cell::Str(v) = (c.get)(r) else { wrong() };
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
        Kind::Time => {
            let mut b = TimestampMicrosecondBuilder::new().with_timezone("UTC");
            for r in rows {
                let Cell::Time(v) = (c.get)(r) else { wrong() };
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
        Kind::Bin => {
            let mut b = BinaryBuilder::new();
            for r in rows {
                let Cell::Bin(v) = (c.get)(r) else { wrong() };
                b.append_option(v);
            }
            Arc::new(b.finish())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        a: u64,
        b: Option<f64>,
        c: String,
    }

    #[test]
    fn a_column_list_gives_the_schema_and_the_batch() {
        let cols: Vec<Column<Row>> = vec![
            col!("a", u64, |r: &Row| r.a),
            col!("b", f64?, |r: &Row| r.b),
            col!("c", str, |r: &Row| r.c.as_str()),
        ];
        let rows = [
            Row {
                a: 1,
                b: Some(f64::NAN),
                c: "x".into(),
            },
            Row {
                a: 2,
                b: Some(0.5),
                c: "y".into(),
            },
        ];
        let b = batch(&cols, rows.iter()).unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.schema().field(1).data_type(), &DataType::Float64);
        assert!(b.schema().field(1).is_nullable() && !b.schema().field(0).is_nullable());
        assert_eq!(b.column(1).null_count(), 1, "NaN is null");
    }
}
