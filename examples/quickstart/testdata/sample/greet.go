package main

import (
	"fmt"
	"os"
)

// Greeting returns the greeting for name.
func Greeting(name string) string {
	return "Hi " + name // TICKET-7: should be "Hello, NAME!"
}

func main() {
	name := "world"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	fmt.Println(Greeting(name))
}
