# SPDX-License-Identifier: Apache-2.0
# The bench chart: each endpoint's median req/s beside its ceiling, for
# every MPM run.  bench/report.py calls it with
#   datafile (chart.dat: a header row, then one row per endpoint),
#   outfile (the SVG), ncols (columns in datafile), subtitle.
set terminal svg size 1000,560 dynamic enhanced font "sans,12" background "white"
set output outfile
set title "mod_blog against its ceilings\n".subtitle noenhanced
set ylabel "requests per second"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.95
set key top left
set grid ytics
set yrange [0:*]
# room above the tallest bar for its label
set offsets 0, 0, graph 0.12, 0
set xrange [-0.6:5.6]
set key autotitle columnheader
set xtics nomirror
set ytics nomirror
set format y "%.0f"
# blog bars solid, ceiling bars pale, one hue per MPM
array colors[4] = ["#1f5fa8", "#a9c6ea", "#c0561c", "#f2c3a4"]
n = ncols - 1
plot for [i=2:ncols] datafile using i:xtic(1) title columnheader(i) \
        lc rgb colors[(i - 2) % 4 + 1], \
     for [i=2:ncols] datafile using ($0 + ((i - 2) - (n - 1) / 2.0) / (n + 1.0)):(column(i)):(sprintf("%.0f", column(i))) \
        with labels rotate by 90 left offset 0,0.3 font ",9" notitle
