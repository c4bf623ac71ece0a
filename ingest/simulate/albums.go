package simulate

import (
	"time"

	"github.com/streamfold/streamfold/schema"
)

// The sf/ldf album workflow (seed 001): an uploaded photo of records goes
// through image processing and album extraction, optionally a human
// validation task, year validation and price lookup.

type catalogAlbum struct {
	name, artist string
	year         int
}

// albumCatalog is what the photos show.
var albumCatalog = []catalogAlbum{
	{"Elvis Presley", "Elvis Presley", 1956}, {"Ella and Louis", "Ella Fitzgerald & Louis Armstrong", 1956},
	{"Songs for Swingin' Lovers!", "Frank Sinatra", 1956}, {"Blue Train", "John Coltrane", 1958},
	{"Kind of Blue", "Miles Davis", 1959}, {"Time Out", "The Dave Brubeck Quartet", 1959},
	{"Mingus Ah Um", "Charles Mingus", 1959}, {"At Last!", "Etta James", 1960},
	{"Live at the Apollo", "James Brown", 1963}, {"A Love Supreme", "John Coltrane", 1965},
	{"Highway 61 Revisited", "Bob Dylan", 1965}, {"Pet Sounds", "The Beach Boys", 1966},
	{"Revolver", "The Beatles", 1966}, {"The Velvet Underground & Nico", "The Velvet Underground", 1967},
	{"Are You Experienced", "The Jimi Hendrix Experience", 1967}, {"Sgt. Pepper's Lonely Hearts Club Band", "The Beatles", 1967},
	{"Astral Weeks", "Van Morrison", 1968}, {"Abbey Road", "The Beatles", 1969},
	{"Let It Bleed", "The Rolling Stones", 1969}, {"Bridge over Troubled Water", "Simon & Garfunkel", 1970},
	{"Paranoid", "Black Sabbath", 1970}, {"Bitches Brew", "Miles Davis", 1970},
	{"What's Going On", "Marvin Gaye", 1971}, {"Blue", "Joni Mitchell", 1971},
	{"Tapestry", "Carole King", 1971}, {"Led Zeppelin IV", "Led Zeppelin", 1971},
	{"Harvest", "Neil Young", 1972}, {"Exile on Main St.", "The Rolling Stones", 1972},
	{"The Rise and Fall of Ziggy Stardust and the Spiders from Mars", "David Bowie", 1972},
	{"The Dark Side of the Moon", "Pink Floyd", 1973}, {"Head Hunters", "Herbie Hancock", 1973},
	{"Born to Run", "Bruce Springsteen", 1975}, {"Horses", "Patti Smith", 1975},
	{"Hotel California", "Eagles", 1976}, {"Songs in the Key of Life", "Stevie Wonder", 1976},
	{"Rumours", "Fleetwood Mac", 1977}, {"Aja", "Steely Dan", 1977},
	{"Never Mind the Bollocks, Here's the Sex Pistols", "Sex Pistols", 1977},
	{"London Calling", "The Clash", 1979}, {"Unknown Pleasures", "Joy Division", 1979},
	{"Off the Wall", "Michael Jackson", 1979}, {"Back in Black", "AC/DC", 1980},
	{"Remain in Light", "Talking Heads", 1980}, {"Thriller", "Michael Jackson", 1982},
	{"Purple Rain", "Prince and The Revolution", 1984}, {"The Queen Is Dead", "The Smiths", 1986},
	{"Graceland", "Paul Simon", 1986}, {"The Joshua Tree", "U2", 1987},
	{"Appetite for Destruction", "Guns N' Roses", 1987}, {"Sign o' the Times", "Prince", 1987},
	{"Doolittle", "Pixies", 1989}, {"Nevermind", "Nirvana", 1991},
	{"Blue Lines", "Massive Attack", 1991}, {"Achtung Baby", "U2", 1991}, {"Ten", "Pearl Jam", 1991},
	{"The Chronic", "Dr. Dre", 1992}, {"Illmatic", "Nas", 1994}, {"Dummy", "Portishead", 1994},
	{"Ready to Die", "The Notorious B.I.G.", 1994}, {"(What's the Story) Morning Glory?", "Oasis", 1995},
	{"Jagged Little Pill", "Alanis Morissette", 1995}, {"OK Computer", "Radiohead", 1997},
	{"Homogenic", "Björk", 1997}, {"The Miseducation of Lauryn Hill", "Lauryn Hill", 1998},
	{"Kid A", "Radiohead", 2000}, {"Is This It", "The Strokes", 2001}, {"Vespertine", "Björk", 2001},
	{"Elephant", "The White Stripes", 2003}, {"Funeral", "Arcade Fire", 2004},
	{"Back to Black", "Amy Winehouse", 2006}, {"In Rainbows", "Radiohead", 2007},
	{"21", "Adele", 2011}, {"Channel Orange", "Frank Ocean", 2012},
	{"Random Access Memories", "Daft Punk", 2013}, {"To Pimp a Butterfly", "Kendrick Lamar", 2015},
	{"Currents", "Tame Impala", 2015}, {"Blonde", "Frank Ocean", 2016}, {"Lemonade", "Beyoncé", 2016},
	{"Folklore", "Taylor Swift", 2020}, {"Punisher", "Phoebe Bridgers", 2020},
	{"Renaissance", "Beyoncé", 2022}, {"SOS", "SZA", 2022}, {"Guts", "Olivia Rodrigo", 2023},
	{"Cowboy Carter", "Beyoncé", 2024}, {"Brat", "Charli XCX", 2024},
	{"The Tortured Poets Department", "Taylor Swift", 2024},
}

// Album workflow steps, as currentStep reports them.
const (
	stepImageProcessing = "image-processing"
	stepAlbumExtraction = "album-extraction"
	stepHumanValidation = "human-validation"
	stepAlbumValidation = "album-validation"
	stepPriceLookup     = "price-lookup"
)

// albumFailures are the errors of a failed execution, by the step it fails in.
var albumFailures = [][]string{
	{"ImageProcessingError: unsupported image format (image/heic)", "S3 GetObject failed: NoSuchKey"},
	{"Bedrock InvokeModel failed: ThrottlingException: Too many requests", "album extraction returned no parseable JSON"},
	{"year validation lambda timed out after 30s"},
	{"Discogs API rate limit exceeded (HTTP 429)", "eBay Browse API returned HTTP 503"},
}

type albumRun struct {
	g       *gen
	wt      string
	id      string
	source  string
	subject string
	start   time.Time
	t       time.Time
	albums  int
}

func (a *albumRun) lat() time.Duration {
	return a.g.between(5*time.Millisecond, 150*time.Millisecond)
}

func (a *albumRun) exec(typ string, p schema.AlbumExecutionEvent) {
	p.WorkflowType, p.ExecutionID = a.wt, a.id
	a.g.add(a.g.event(a.g.uuid(), a.source, typ, a.subject, a.t, &p), a.t, a.lat(), 0)
}

func (a *albumRun) album(typ string, p schema.AlbumEvent) {
	p.WorkflowType, p.ExecutionID = a.wt, a.id
	a.g.add(a.g.event(a.g.uuid(), a.source, typ, a.subject, a.t, &p), a.t, a.lat(), 0)
}

func (a *albumRun) task(typ string, p schema.TaskEvent) {
	p.WorkflowType, p.ExecutionID = a.wt, a.id
	a.g.add(a.g.event(a.g.uuid(), a.source, typ, "albums/task/"+p.TaskID, a.t, &p), a.t, a.lat(), 0)
}

// advance moves the execution's clock.
func (a *albumRun) advance(d time.Duration) { a.t = msec(a.t.Add(d)) }

// cost is the execution's estimated cost in USD so far: Step Functions
// standard workflows pay per state transition, durable functions per
// invocation, so sf costs more (about 0.004-0.009) than ldf (0.001-0.004).
func (a *albumRun) cost() *float64 {
	g := a.g
	var micros int64
	if a.wt == schema.WorkflowStepFunctions {
		micros = min(4_000+600*int64(a.albums)+int64(g.r.IntN(500)), 9_000)
	} else {
		micros = min(1_000+350*int64(a.albums)+int64(g.r.IntN(400)), 4_000)
	}
	return ptr(money(micros))
}

func (a *albumRun) duration() *int64 { return ptr(a.t.Sub(a.start).Milliseconds()) }

// fail ends the execution with an error from the given step.
func (a *albumRun) fail(step int) {
	g := a.g
	a.advance(g.between(50*time.Millisecond, 2*time.Second))
	p := schema.AlbumExecutionEvent{Error: albumFailures[step][g.r.IntN(len(albumFailures[step]))]}
	if g.chance(700) {
		p.DurationMs, p.EstimatedCost = a.duration(), a.cost()
	}
	a.exec(schema.TypeAlbumExecutionFailed, p)
}

// albumExecution simulates one execution, sf or ldf about equally often.
func (g *gen) albumExecution(at time.Time) {
	a := &albumRun{g: g, wt: schema.WorkflowStepFunctions, id: g.uuid(), start: msec(at), t: msec(at)}
	if g.chance(500) {
		a.wt = schema.WorkflowDurableFunctions
	}
	a.source, a.subject = "streamfold.albums/"+a.wt, "albums/execution/"+a.id
	failAt := -1
	if g.chance(100) {
		failAt = g.weighted([]int{2, 4, 1, 3})
	}
	// sf spends more time in state transitions than ldf.
	overhead := time.Duration(0)
	if a.wt == schema.WorkflowStepFunctions {
		overhead = 400 * time.Millisecond
	}

	key := "uploads/albums-" + a.start.Format("2006-01-02") + "-" + g.hex(8) + ".jpg"
	a.exec(schema.TypeAlbumExecutionStarted, schema.AlbumExecutionEvent{ImageS3Key: key})
	a.advance(g.between(100*time.Millisecond, 800*time.Millisecond) + overhead)
	a.exec(schema.TypeAlbumExecutionStep, schema.AlbumExecutionEvent{CurrentStep: stepImageProcessing})
	a.advance(g.skewed(2*time.Second, 6*time.Second, 20*time.Second))
	if failAt == 0 {
		a.fail(0)
		return
	}
	a.exec(schema.TypeAlbumExecutionStep, schema.AlbumExecutionEvent{CurrentStep: stepAlbumExtraction})
	a.advance(g.skewed(3*time.Second, 10*time.Second, 30*time.Second) + overhead)
	if failAt == 1 {
		a.fail(1)
		return
	}

	// Extraction: 1-8 distinct albums; OCR gets about one year in five wrong.
	a.albums = 1 + g.weighted([]int{10, 18, 20, 18, 14, 9, 6, 5})
	found := make([]catalogAlbum, a.albums)
	read := make([]int, a.albums) // the year as extracted
	cols := 2 + g.r.IntN(3)
	w, h := 180+g.r.IntN(140), 180+g.r.IntN(140)
	for i, k := range g.r.Perm(len(albumCatalog))[:a.albums] {
		found[i], read[i] = albumCatalog[k], albumCatalog[k].year
		if g.chance(200) {
			d := []int{-3, -2, -1, 1, 2, 3}[g.r.IntN(6)]
			if y := read[i] + d; y < 1950 || y > 2024 {
				d = -d
			}
			read[i] += d
		}
		a.advance(g.between(20*time.Millisecond, 300*time.Millisecond))
		a.album(schema.TypeAlbumExtracted, schema.AlbumEvent{
			AlbumIndex: i + 1, AlbumName: found[i].name, Artist: found[i].artist, Year: ptr(read[i]),
			ImageRegion: &schema.ImageRegion{X: (i % cols) * (w + 12), Y: (i / cols) * (h + 12), Width: w, Height: h},
		})
	}

	// Validation: by a person for about a third of the executions, else
	// against the catalog. yearOriginal is the extracted year.
	year := make([]int, a.albums)
	validated := make([]bool, a.albums)
	if g.chance(350) {
		a.advance(g.between(100*time.Millisecond, time.Second))
		a.exec(schema.TypeAlbumExecutionWaiting, schema.AlbumExecutionEvent{CurrentStep: stepHumanValidation})
		task := schema.TaskEvent{TaskID: g.uuid(), ImageS3Key: key}
		if a.wt == schema.WorkflowStepFunctions {
			task.TaskToken = "AQB4AAAAKgAAAAMAAAAAAAAAA" + g.alnum(150)
		} else {
			task.TaskToken = "cb-" + g.uuid()
		}
		for i := range found {
			task.Albums = append(task.Albums, schema.TaskAlbum{AlbumIndex: i + 1, AlbumName: found[i].name, Artist: found[i].artist, Year: read[i]})
		}
		a.advance(g.between(50*time.Millisecond, 500*time.Millisecond))
		expires := sec(a.t).Add(time.Hour)
		task.ExpiresAt = &expires
		a.task(schema.TypeTaskCreated, task)
		taskID := task.TaskID
		if g.chance(120) {
			a.t = expires
			a.task(schema.TypeTaskExpired, schema.TaskEvent{TaskID: taskID})
			a.advance(g.between(100*time.Millisecond, 2*time.Second))
			a.exec(schema.TypeAlbumExecutionFailed, schema.AlbumExecutionEvent{
				Error: "human validation task " + taskID + " expired", DurationMs: a.duration(), EstimatedCost: a.cost(),
			})
			return
		}
		a.advance(g.skewed(45*time.Second, 8*time.Minute, 55*time.Minute))
		done := schema.TaskEvent{TaskID: taskID}
		for i := range found {
			year[i], validated[i] = read[i], true
			if read[i] != found[i].year && g.chance(900) {
				year[i] = found[i].year
			}
			done.ValidatedData = append(done.ValidatedData, schema.TaskAlbum{AlbumIndex: i + 1, AlbumName: found[i].name, Artist: found[i].artist, Year: year[i]})
		}
		a.task(schema.TypeTaskCompleted, done)
		a.advance(g.between(100*time.Millisecond, time.Second))
		a.exec(schema.TypeAlbumExecutionStep, schema.AlbumExecutionEvent{CurrentStep: stepAlbumValidation})
	} else {
		a.advance(g.between(100*time.Millisecond, time.Second) + overhead)
		a.exec(schema.TypeAlbumExecutionStep, schema.AlbumExecutionEvent{CurrentStep: stepAlbumValidation})
		a.advance(g.skewed(time.Second, 3*time.Second, 10*time.Second))
		for i := range found {
			year[i], validated[i] = read[i], g.chance(920)
			if read[i] != found[i].year && g.chance(750) {
				year[i], validated[i] = found[i].year, true
			}
		}
	}
	if failAt == 2 {
		a.fail(2)
		return
	}
	for i := range found {
		a.advance(g.between(20*time.Millisecond, 200*time.Millisecond))
		a.album(schema.TypeAlbumValidated, schema.AlbumEvent{
			AlbumIndex: i + 1, AlbumName: found[i].name, Year: ptr(year[i]), YearValidated: ptr(validated[i]), YearOriginal: ptr(read[i]),
		})
	}

	a.advance(g.between(100*time.Millisecond, time.Second) + overhead)
	a.exec(schema.TypeAlbumExecutionStep, schema.AlbumExecutionEvent{CurrentStep: stepPriceLookup})
	priced := a.albums
	if failAt == 3 {
		priced = g.r.IntN(a.albums)
	}
	for i := range priced {
		a.advance(g.skewed(300*time.Millisecond, 1500*time.Millisecond, 6*time.Second))
		source := []string{"discogs-api", "ebay", "manual"}[g.weighted([]int{70, 25, 5})]
		a.album(schema.TypeAlbumPriced, schema.AlbumEvent{
			AlbumIndex: i + 1, PriceEstimate: ptr(cents(int64(g.intIn(500, 12_000)))),
			PriceConfidence: ptr(cents(int64(g.intIn(30, 99)))), PriceSource: source,
		})
	}
	if failAt == 3 {
		a.fail(3)
		return
	}
	a.advance(g.between(100*time.Millisecond, time.Second))
	a.exec(schema.TypeAlbumExecutionCompleted, schema.AlbumExecutionEvent{DurationMs: a.duration(), EstimatedCost: a.cost()})
}
