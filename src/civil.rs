//! Calendar dates and times from Unix microseconds and back (proleptic
//! Gregorian, UTC), for DATETIME columns and run ids. Howard Hinnant's
//! days-from-civil algorithms.

/// A UTC date and time to the microsecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    /// Year.
    pub year: i64,
    /// Month, 1..=12.
    pub month: u32,
    /// Day of the month, 1..=31.
    pub day: u32,
    /// Hour, 0..=23.
    pub hour: u32,
    /// Minute, 0..=59.
    pub minute: u32,
    /// Second, 0..=59.
    pub second: u32,
    /// Microsecond, 0..=999_999.
    pub micros: u32,
}

/// The civil time of `micros` since the Unix epoch.
///
/// ```
/// let c = ibench::civil::from_micros(1_735_689_600_000_001);
/// assert_eq!((c.year, c.month, c.day, c.hour, c.micros), (2025, 1, 1, 0, 1));
/// ```
pub fn from_micros(micros: i64) -> Civil {
    let secs = micros.div_euclid(1_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    Civil {
        year: yoe + era * 400 + (month <= 2) as i64,
        month,
        day,
        hour: (rem / 3600) as u32,
        minute: (rem / 60 % 60) as u32,
        second: (rem % 60) as u32,
        micros: micros.rem_euclid(1_000_000) as u32,
    }
}

/// Microseconds since the Unix epoch of a civil time.
pub fn to_micros(c: Civil) -> i64 {
    let y = c.year - (c.month <= 2) as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = c.month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + c.day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400 + c.hour as i64 * 3600 + c.minute as i64 * 60 + c.second as i64) * 1_000_000) + c.micros as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_across_centuries_and_leap_days() {
        for micros in [
            0,
            951_782_400_000_000,
            1_735_689_600_123_456,
            -1,
            4_102_444_800_000_000,
            1_709_164_800_000_000,
        ] {
            assert_eq!(to_micros(from_micros(micros)), micros, "{micros}");
        }
        let leap = from_micros(1_709_164_800_000_000); // 2024-02-29
        assert_eq!((leap.year, leap.month, leap.day), (2024, 2, 29));
    }
}
