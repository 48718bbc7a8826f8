//! Line charts as inline SVG: a polyline per series, each point's interval as a bar
//! (`<line class="interval">`), and reference points (a seed's published figures) as hollow
//! diamonds beside them (`<path class="reference">`). Every point, interval and reference
//! carries its figures in `data-*` attributes, so a test (or a reader's script) reads back
//! what was drawn. A chart whose x is a category (`Chart::x_names`) draws its points
//! unjoined and names each x under the axis; a linear y axis reaches below 0 when a figure
//! does (a cost can be negative), a log one draws only figures above 0.

use super::html_escape;
use crate::results::Chart;
use std::fmt::Write as _;

const PALETTE: &[&str] =
    &["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

/// The references' colour (not one of a series'), unless a reference is named after a
/// series (`fluid model, capacity 10` beside `capacity 10`): then that series' colour.
const REFERENCE_COLOR: &str = "#444";

/// One line of a chart: name, colour index (one per variant), (x, y) points.
pub type Series = (String, usize, Vec<(f64, f64)>);

/// A line chart as inline SVG: one polyline per series, linear x, linear or log y.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_y: bool,
) -> String {
    let c = Chart {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        series: series.iter().map(|(n, _, p)| (n.clone(), p.clone())).collect(),
        ..Default::default()
    };
    let colors: Vec<usize> = series.iter().map(|s| s.1).collect();
    svg(&c, &colors, log_y)
}

/// A stored chart as inline SVG, with its intervals and references; a log y axis when its
/// title says "log scale".
pub fn chart(c: &Chart) -> String {
    let colors: Vec<usize> = (0..c.series.len()).collect();
    svg(c, &colors, c.title.contains("log scale"))
}

fn svg(c: &Chart, colors: &[usize], log_y: bool) -> String {
    let mut pts: Vec<(f64, f64)> = c.series.iter().flat_map(|s| s.1.iter().copied()).collect();
    pts.extend(c.intervals.iter().flat_map(|s| s.1.iter().flat_map(|&(x, a, b)| [(x, a), (x, b)])));
    pts.extend(c.references.iter().flat_map(|s| s.1.iter().copied()));
    pts.retain(|p| shown(p.1, log_y) && p.0.is_finite());
    if pts.is_empty() {
        return format!("<p>{}: no data.</p>", html_escape(&c.title));
    }
    let mut f = Frame::new(&pts, log_y);
    if !c.x_names.is_empty() {
        // Room for the names, written slanted under the axis.
        f.h += 50.0;
        f.mb += 50.0;
        f.categorical = true;
        // The first name, slanted left from its x, must stay inside the chart: ~6 px a
        // character, cos 30° of it across.
        let first = c.x_names.first().map_or(0, |(_, n)| n.chars().count()) as f64;
        let extra = (first * 6.0 * 0.87 - f.ml + 20.0).max(0.0);
        f.ml += extra;
        f.w += extra;
    }
    let (w, h, ml) = (f.w, f.h, f.ml);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\" aria-label=\"{t}\">\n\
         <text x=\"{ml}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{t}</text>\n",
        t = html_escape(&c.title)
    );
    chart_axes(&mut s, &f, &pts, c);
    let n = c.series.len();
    for (i, (name, points)) in c.series.iter().enumerate() {
        let color = colors.get(i).copied().unwrap_or(i);
        let ivs = c.intervals.iter().find(|(s, _)| s == name).map(|(_, v)| v.as_slice());
        // Side by side when several series have bars at the same x.
        let dx = if ivs.is_some() { (i as f64 - (n as f64 - 1.0) / 2.0) * 5.0 } else { 0.0 };
        chart_series(&mut s, &f, i, &(name.clone(), color, points.clone()), ivs.unwrap_or(&[]), dx);
    }
    for (j, (name, points)) in c.references.iter().enumerate() {
        let named_after = c.series.iter().position(|(sn, _)| name.ends_with(sn.as_str()));
        let color = named_after.map_or(REFERENCE_COLOR, |i| {
            PALETTE[colors.get(i).copied().unwrap_or(i) % PALETTE.len()]
        });
        chart_reference(&mut s, &f, n + j, (name, color), points);
    }
    s.push_str("</svg>\n");
    s
}

/// Whether a figure can be drawn on the y axis: finite, and above 0 on a log axis.
fn shown(y: f64, log_y: bool) -> bool {
    y.is_finite() && (!log_y || y > 0.0)
}

/// A chart's geometry (size and margins, px) and the ranges its axes span.
struct Frame {
    w: f64,
    h: f64,
    ml: f64,
    mr: f64,
    mt: f64,
    mb: f64,
    log_y: bool,
    /// The x axis names categories: points unjoined, each x under its name.
    categorical: bool,
    xmin: f64,
    xspan: f64,
    /// In the y axis's scale (log10 of the value on a log axis).
    ymin: f64,
    /// See `ymin`.
    ymax: f64,
}

impl Frame {
    /// The frame that holds `pts` (on a log axis all with y > 0): x from the smallest to the
    /// largest, with room at both ends for bars and markers; y from 0 (or 10% below the
    /// lowest, when it is below 0) to 10% above the largest, or on a log axis from power of
    /// ten to power of ten.
    fn new(pts: &[(f64, f64)], log_y: bool) -> Frame {
        let (w, h, ml, mr, mt, mb) = (640.0, 340.0, 80.0, 190.0, 30.0, 45.0);
        let xmin = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let xmax = pts.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        let tf = |y: f64| if log_y { y.log10() } else { y };
        let lowest = pts.iter().map(|p| tf(p.1)).fold(f64::INFINITY, f64::min);
        let mut ymin = if log_y { lowest.floor() } else { lowest.min(0.0) * 1.1 };
        let mut ymax = pts.iter().map(|p| tf(p.1)).fold(f64::NEG_INFINITY, f64::max);
        ymax = if log_y { ymax.ceil() } else { ymax.max(0.0) * 1.1 };
        if ymax <= ymin {
            ymax = ymin + 1.0;
            ymin -= if log_y { 1.0 } else { 0.0 };
        }
        let span = if xmax > xmin { xmax - xmin } else { 1.0 };
        // 4% of the span either side: a bar or a marker at the ends stays inside the axes.
        let pad = span * 0.04;
        Frame {
            w,
            h,
            ml,
            mr,
            mt,
            mb,
            log_y,
            categorical: false,
            xmin: xmin - pad,
            xspan: span + 2.0 * pad,
            ymin,
            ymax,
        }
    }

    /// A value in the y axis's scale.
    fn tf(&self, y: f64) -> f64 {
        if self.log_y {
            y.log10()
        } else {
            y
        }
    }

    /// Where `x` lies across the chart, px.
    fn px(&self, x: f64) -> f64 {
        self.ml + (x - self.xmin) / self.xspan * (self.w - self.ml - self.mr)
    }

    /// Where `y` lies down the chart, px.
    fn py(&self, y: f64) -> f64 {
        let (ymin, ymax) = (self.ymin, self.ymax);
        self.mt + (1.0 - (self.tf(y) - ymin) / (ymax - ymin)) * (self.h - self.mt - self.mb)
    }

    /// Where legend entry `i` lies, px down.
    fn legend_y(&self, i: usize) -> f64 {
        self.mt + 14.0 * i as f64
    }
}

/// A figure for a tick label or a tooltip: 1.2M, 3.4k, 1.37.
fn short(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v.abs() >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The axes, the y grid with its labels, a label per x of `pts` (its name, slanted, on an
/// axis of categories), and the axis titles.
fn chart_axes(s: &mut String, f: &Frame, pts: &[(f64, f64)], c: &Chart) {
    let (x_label, y_label) = (c.x_label.as_str(), c.y_label.as_str());
    let (w, h, ml, mr, mt, mb) = (f.w, f.h, f.ml, f.mr, f.mt, f.mb);
    let (ymin, ymax, log_y) = (f.ymin, f.ymax, f.log_y);
    // Axes and grid.
    let _ = writeln!(
        s,
        "<line x1=\"{ml}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/><line x1=\"{ml}\" y1=\"{mt}\" \
         x2=\"{ml}\" y2=\"{}\" stroke=\"#333\"/>",
        h - mb,
        w - mr,
        h - mb,
        h - mb
    );
    // Linear: five even steps; log: one tick per power of ten.
    let ticks = if log_y { (ymax - ymin).round().max(1.0) as usize } else { 5 };
    for i in 0..=ticks {
        let v = ymin + (ymax - ymin) * i as f64 / ticks as f64;
        let real = if log_y { 10f64.powf(v) } else { v };
        let y = mt + (1.0 - i as f64 / ticks as f64) * (h - mt - mb);
        let _ = writeln!(
            s,
            "<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" \
             y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - mr,
            ml - 5.0,
            y + 4.0,
            short(real)
        );
    }
    if !log_y && ymin < 0.0 {
        let _ = writeln!(
            s,
            "<line class=\"zero\" x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#888\"/>",
            w - mr,
            y = f.py(0.0)
        );
    }
    let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if !c.x_ticks.is_empty() {
        // A transformed numeric axis: a grid line and a name at each named tick only.
        for (x, name) in c.x_ticks.iter().filter(|(x, _)| *x >= f.xmin && *x <= f.xmin + f.xspan) {
            let px = f.px(*x);
            let _ = writeln!(
                s,
                "<line x1=\"{px:.1}\" y1=\"{mt}\" x2=\"{px:.1}\" y2=\"{}\" stroke=\"#eee\"/>\
                 <text class=\"x-tick\" x=\"{px:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                h - mb,
                h - mb + 15.0,
                html_escape(name)
            );
        }
        xs.clear();
    }
    for x in &xs {
        let name = c.x_names.iter().find(|(v, _)| v == x).map(|(_, n)| n.as_str());
        let (px, y) = (f.px(*x), h - mb + 15.0);
        let _ = match name {
            Some(n) => writeln!(
                s,
                "<text class=\"x-name\" x=\"{px:.1}\" y=\"{y}\" text-anchor=\"end\" \
                 transform=\"rotate(-30 {px:.1} {y})\">{}</text>",
                html_escape(n)
            ),
            None => writeln!(s, "<text x=\"{px:.1}\" y=\"{y}\" text-anchor=\"middle\">{x}</text>"),
        };
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text><text x=\"14\" y=\"{:.1}\" \
         transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">{}</text>",
        ml + (w - ml - mr) / 2.0,
        h - 8.0,
        html_escape(x_label),
        mt + (h - mt - mb) / 2.0,
        mt + (h - mt - mb) / 2.0,
        html_escape(y_label)
    );
}

/// Series `i`: its polyline, a bar per interval (shifted `dx` px), a dot per point with its
/// value, and its legend entry.
fn chart_series(
    s: &mut String,
    f: &Frame,
    i: usize,
    (name, color_index, points): &Series,
    intervals: &[(f64, f64, f64)],
    dx: f64,
) {
    let (w, mr) = (f.w, f.mr);
    let color = PALETTE[color_index % PALETTE.len()];
    let dash = if name.ends_with("p99") { " stroke-dasharray=\"5,3\"" } else { "" };
    let mut p: Vec<(f64, f64)> = points.iter().copied().filter(|p| shown(p.1, f.log_y)).collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    let path: Vec<String> =
        p.iter().map(|(x, y)| format!("{:.1},{:.1}", f.px(*x) + dx, f.py(*y))).collect();
    // Categories have no order between them: their points stay unjoined.
    if !f.categorical {
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
            path.join(" ")
        );
    }
    let n = html_escape(name);
    let drawn = |v: &&(f64, f64, f64)| shown(v.1, f.log_y) && v.2.is_finite() && v.2 >= v.1;
    for &(x, lo, hi) in intervals.iter().filter(drawn) {
        let (cx, y1, y2) = (f.px(x) + dx, f.py(lo), f.py(hi));
        let _ = writeln!(
            s,
            "<line class=\"interval\" data-series=\"{n}\" data-x=\"{x}\" data-low=\"{lo}\" \
             data-high=\"{hi}\" x1=\"{cx:.1}\" y1=\"{y1:.1}\" x2=\"{cx:.1}\" y2=\"{y2:.1}\" \
             stroke=\"{color}\" stroke-width=\"1.5\" opacity=\"0.8\"><title>{n} at {x}: [{}, {}]</title></line>\
             <path d=\"M{:.1} {y1:.1}h6M{:.1} {y2:.1}h6\" stroke=\"{color}\" stroke-width=\"1.5\"/>",
            short(lo),
            short(hi),
            cx - 3.0,
            cx - 3.0
        );
    }
    for (x, y) in &p {
        let _ = writeln!(
            s,
            "<circle class=\"point\" data-series=\"{n}\" data-x=\"{x}\" data-y=\"{y}\" cx=\"{:.1}\" \
             cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{n} at {x}: {}</title></circle>",
            f.px(*x) + dx,
            f.py(*y),
            short(*y)
        );
    }
    let ly = f.legend_y(i);
    let _ = writeln!(
        s,
        "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
         <text x=\"{}\" y=\"{:.1}\">{n}{}</text>",
        w - mr + 10.0,
        w - mr + 30.0,
        w - mr + 35.0,
        ly + 4.0,
        if intervals.is_empty() { "" } else { " (bars: interval)" }
    );
}

/// Reference points: a hollow diamond each, 8 px right of its x, unjoined, and a legend
/// entry at position `i`.
fn chart_reference(
    s: &mut String,
    f: &Frame,
    i: usize,
    (name, color): (&str, &str),
    points: &[(f64, f64)],
) {
    let n = html_escape(name);
    let diamond = |x: f64, y: f64| format!("M{x:.1} {:.1}l5 5l-5 5l-5 -5z", y - 5.0);
    for &(x, y) in points.iter().filter(|p| shown(p.1, f.log_y)) {
        let _ = writeln!(
            s,
            "<path class=\"reference\" data-series=\"{n}\" data-x=\"{x}\" data-y=\"{y}\" d=\"{}\" \
             fill=\"white\" stroke=\"{color}\" stroke-width=\"1.5\"><title>{n} at {x}: {}</title></path>",
            diamond(f.px(x) + 8.0, f.py(y)),
            short(y)
        );
    }
    let ly = f.legend_y(i);
    let _ = writeln!(
        s,
        "<path d=\"{}\" fill=\"white\" stroke=\"{color}\" stroke-width=\"1.5\"/>\
         <text x=\"{}\" y=\"{:.1}\">{n}</text>",
        diamond(f.w - f.mr + 20.0, ly),
        f.w - f.mr + 35.0,
        ly + 4.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `data-*` attributes of every element of `class` in `svg`, in order.
    fn read_back(svg: &str, class: &str) -> Vec<Vec<(String, String)>> {
        let tag = format!("class=\"{class}\"");
        svg.lines()
            .filter(|l| l.contains(&tag))
            .map(|l| {
                l.split(" data-")
                    .skip(1)
                    .map(|a| {
                        let (k, rest) = a.split_once("=\"").expect("attribute");
                        (k.to_string(), rest.split('"').next().unwrap_or("").to_string())
                    })
                    .collect()
            })
            .collect()
    }

    fn ratio_chart() -> Chart {
        Chart {
            title: "Ratio".into(),
            x_label: "P".into(),
            y_label: "×".into(),
            series: vec![("ring/locked".into(), vec![(1.0, 1.5), (2.0, 2.25)])],
            intervals: vec![("ring/locked".into(), vec![(1.0, 1.25, 1.75), (2.0, 2.0, 2.5)])],
            references: vec![("seed 001".into(), vec![(1.0, 1.37), (6.0, 2.52)])],
            ..Default::default()
        }
    }

    #[test]
    fn intervals_are_drawn_with_their_figures_and_span_low_to_high() {
        let s = chart(&ratio_chart());
        let ivs = read_back(&s, "interval");
        assert_eq!(ivs.len(), 2, "{s}");
        let get = |v: &[(String, String)], k: &str| {
            v.iter().find(|(a, _)| a == k).map(|(_, b)| b.clone()).expect(k)
        };
        assert_eq!(get(&ivs[0], "series"), "ring/locked");
        assert_eq!(get(&ivs[0], "x"), "1");
        assert_eq!(get(&ivs[0], "low"), "1.25");
        assert_eq!(get(&ivs[0], "high"), "1.75");
        assert_eq!(get(&ivs[1], "x"), "2");
        // Drawn where the figures say: the bar's top (y2, high) above its bottom (y1, low),
        // and the point between them.
        let line = s.lines().find(|l| l.contains("class=\"interval\"")).expect("bar");
        let attr = |l: &str, k: &str| -> f64 {
            let at = l.find(&format!(" {k}=\"")).expect(k) + k.len() + 3;
            l[at..].split('"').next().expect("value").parse().expect("number")
        };
        let (y1, y2) = (attr(line, "y1"), attr(line, "y2"));
        let dot = s.lines().find(|l| l.contains("class=\"point\"")).expect("point");
        let cy = attr(dot, "cy");
        assert!(y2 < cy && cy < y1, "bar {y2}..{y1}, point {cy}");
        assert_eq!(attr(line, "x1"), attr(dot, "cx"), "the bar goes through its point");
    }

    #[test]
    fn references_are_distinct_markers_beside_the_points() {
        let s = chart(&ratio_chart());
        let refs = read_back(&s, "reference");
        assert_eq!(refs.len(), 2, "{s}");
        assert!(refs[0].contains(&("series".into(), "seed 001".into())));
        assert!(refs[1].contains(&("x".into(), "6".into())));
        assert!(refs[1].contains(&("y".into(), "2.52".into())));
        // No polyline joins them, and they are no series' dots.
        assert_eq!(s.matches("<polyline").count(), 1);
        assert_eq!(read_back(&s, "point").len(), 2);
        assert!(s.contains("seed 001</text>"), "in the legend");
    }

    #[test]
    fn the_axis_holds_the_intervals_and_references() {
        // The interval's high end (9) and the reference (12) exceed every point (2).
        let c = Chart {
            series: vec![("a".into(), vec![(1.0, 2.0), (2.0, 2.0)])],
            intervals: vec![("a".into(), vec![(1.0, 1.0, 9.0)])],
            references: vec![("r".into(), vec![(2.0, 12.0)])],
            ..Default::default()
        };
        let s = chart(&c);
        // 12 × 1.1 = 13.2 at the top of the linear axis.
        assert!(s.contains(">13.2</text>"), "{s}");
        assert!(!s.contains("<p>"), "drawn, not 'no data'");
    }

    #[test]
    fn a_chart_without_intervals_draws_none_and_no_data_says_so() {
        let s = line_chart("t", "x", "y", &[("a".into(), 0, vec![(1.0, 3.0)])], false);
        assert!(!s.contains("class=\"interval\"") && !s.contains("class=\"reference\""));
        assert!(s.contains("class=\"point\""));
        assert!(chart(&Chart::default()).contains("no data"));
    }

    #[test]
    fn named_ticks_label_a_transformed_axis_and_keep_the_series_joined() {
        // A percentile axis: x = log10(1/(1 − q)), points at 0, 0.5, 1, 1.5, 2.
        let pts: Vec<(f64, f64)> =
            (0..5).map(|i| (f64::from(i) / 2.0, 1.0 + f64::from(i))).collect();
        let c = Chart {
            title: "Latency by percentile (log scale)".into(),
            series: vec![("ring".into(), pts)],
            x_ticks: vec![
                (0.0, "0%".into()),
                (1.0, "90%".into()),
                (2.0, "99%".into()),
                (3.0, "99.9%".into()),
            ],
            ..Default::default()
        };
        let s = chart(&c);
        assert!(s.contains("<polyline"), "the series is joined: {s}");
        for name in ["0%", "90%", "99%"] {
            assert!(
                s.contains("class=\"x-tick\"") && s.contains(&format!(">{name}</text>")),
                "{name}: {s}"
            );
        }
        // 99.9% lies past the last point: not drawn; the raw x (0.5, 1.5) are not labelled.
        assert!(
            !s.contains(">99.9%</text>")
                && !s.contains(">0.5</text>")
                && !s.contains(">1.5</text>"),
            "{s}"
        );
    }
}
