module example.com/walled

go 1.26
