//! Series colours that stay readable on the theme's background: a colour too close to the
//! background in brightness (yellow on white) is darkened (or, on a dark background, lightened)
//! just enough, keeping its hue. The arrangement keeps the colour the user picked; this is how it is
//! drawn.

/// The least contrast ratio (WCAG) of a drawn line against its background: 3:1, the ratio for
/// graphical objects.
pub const MIN_CONTRAST: f64 = 3.0;

/// The background of the light theme and of exported images.
pub const WHITE: [u8; 3] = [255, 255, 255];

/// WCAG relative luminance of an sRGB colour.
fn luminance([r, g, b]: [u8; 3]) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG contrast ratio of two colours (1 to 21).
pub fn ratio(a: [u8; 3], b: [u8; 3]) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `color` as drawn on `background`: itself when the contrast is at least [`MIN_CONTRAST`], else
/// mixed towards black (light background) or white (dark background) until it is.
pub fn on_background(color: [u8; 3], background: [u8; 3]) -> [u8; 3] {
    let towards: f64 = if luminance(background) > 0.5 { 0.0 } else { 255.0 };
    let mut c = color;
    for step in 1..=20 {
        if ratio(c, background) >= MIN_CONTRAST {
            break;
        }
        let k = f64::from(step) * 0.05;
        c = color.map(|v| (f64::from(v) * (1.0 - k) + towards * k).round() as u8);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yellow_on_white_is_darkened_readable_colours_are_kept() {
        let yellow = [240, 228, 66];
        assert!(ratio(yellow, WHITE) < 1.5, "the problem: yellow on white");
        let drawn = on_background(yellow, WHITE);
        assert!(ratio(drawn, WHITE) >= MIN_CONTRAST, "{drawn:?}");
        assert!(drawn[0] > drawn[2] && drawn[1] > drawn[2], "still a yellow hue: {drawn:?}");
        let blue = [0, 114, 178];
        assert_eq!(on_background(blue, WHITE), blue, "already readable");
        let dark = [27, 27, 27];
        let navy = [20, 20, 90];
        assert!(ratio(on_background(navy, dark), dark) >= MIN_CONTRAST, "lightened on a dark background");
        assert_eq!(on_background(yellow, dark), yellow);
    }
}
