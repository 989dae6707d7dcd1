package toolsearch

// irregular maps the irregular forms of the verbs and nouns of tool
// catalogs to their base form, which the Snowball stemmer does not do
// ("paid" to "pay", "sent" to "send", "wrote" to "write", "children" to
// "child"; "people" is a stop word). Words with a second, common meaning are left out ("left",
// "bit", "saw", "lay").
var irregular = map[string]string{
	"began": "begin", "begun": "begin", "bought": "buy", "brought": "bring", "broke": "break",
	"broken": "break", "built": "build", "caught": "catch", "chose": "choose", "chosen": "choose",
	"dealt": "deal", "drew": "draw", "drawn": "draw", "drove": "drive", "driven": "drive",
	"fell": "fall", "fallen": "fall", "felt": "feel", "fought": "fight", "flew": "fly",
	"flown": "fly", "forgot": "forget", "forgotten": "forget", "forgave": "forgive",
	"forgiven": "forgive", "found": "find", "froze": "freeze", "frozen": "freeze", "gave": "give",
	"given": "give", "gone": "go", "went": "go", "got": "get", "gotten": "get", "grew": "grow",
	"grown": "grow", "heard": "hear", "held": "hold", "hid": "hide", "hidden": "hide",
	"hung": "hang", "kept": "keep", "knew": "know", "known": "know", "led": "lead", "lost": "lose",
	"made": "make", "meant": "mean", "met": "meet", "overrode": "override", "overridden": "override",
	"paid": "pay", "prepaid": "prepay", "ran": "run", "rebuilt": "rebuild", "reran": "rerun",
	"resent": "resend", "rewrote": "rewrite", "rewritten": "rewrite", "rode": "ride",
	"ridden": "ride", "rang": "ring", "rung": "ring", "rose": "rise", "risen": "rise",
	"said": "say", "seen": "see", "sent": "send", "shook": "shake", "shaken": "shake",
	"shown": "show", "sold": "sell", "spoke": "speak", "spoken": "speak", "spent": "spend",
	"stole": "steal", "stolen": "steal", "stuck": "stick", "swept": "sweep", "taught": "teach",
	"told": "tell", "took": "take", "taken": "take", "thought": "think", "threw": "throw",
	"thrown": "throw", "tore": "tear", "torn": "tear", "understood": "understand", "undid": "undo",
	"undone": "undo", "withdrew": "withdraw", "withdrawn": "withdraw", "woke": "wake",
	"woken": "wake", "won": "win", "wore": "wear", "worn": "wear", "wrote": "write",
	"written": "write", "children": "child", "men": "man", "women": "woman",
	"indices": "index", "vertices": "vertex", "matrices": "matrix", "analyses": "analysis",
	"criteria": "criterion", "mice": "mouse", "feet": "foot", "teeth": "tooth",
}

// ownStems are the words that keep a stem of their own, apart from a word
// of another meaning that the Snowball stemmer gives the same stem: an
// activity is not to activate, a business not busy, a conversion not a
// conversation, a container not what a text contains, the local of a
// file not to localize it, a location not to locate, a terminal not to
// terminate, directions not direct, a producer not what a stack produced,
// accounting not an account, a recording not a record, a presentation not
// present, to invalidate not invalid, personal not a person, staging (the
// environment) not a stage (of a deal, of a pipeline), production (the
// environment) not a product.
var ownStems = map[string]string{
	"activity": "activity", "activities": "activity",
	"business": "business", "businesses": "business",
	"conversion": "conversion", "conversions": "conversion",
	"container": "container", "containers": "container", "containerized": "container",
	"localize": "localiz", "localizes": "localiz", "localized": "localiz", "localizing": "localiz",
	"localization": "localiz", "localizations": "localiz", "localise": "localiz",
	"localised": "localiz", "localisation": "localiz", "locale": "locale", "locales": "locale",
	"location": "location", "locations": "location",
	"terminal": "terminal", "terminals": "terminal",
	"direction": "direction", "directions": "direction",
	"producer": "producer", "producers": "producer",
	"accounting": "accounting", "accountant": "accountant", "accountants": "accountant",
	"recording": "recording", "recordings": "recording",
	"presentation": "presentation", "presentations": "presentation",
	"invalidate": "invalidat", "invalidates": "invalidat", "invalidated": "invalidat",
	"invalidating": "invalidat", "invalidation": "invalidat", "invalidations": "invalidat",
	"personal":   "personal",
	"staging":    "staging",
	"production": "production", "productions": "production",
}
